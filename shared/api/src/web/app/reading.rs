//! Where a reader last read in each book: the chapter and page of the reader last opened, kept
//! in the `reading` cookie (the last [`BOOKS`] books, most recent first) and offered as
//! "continue reading": on the book's page for its owner (the cookie of `/dashboard`, keyed by
//! the book's id), on the first page of a shared book for whoever holds the link (the cookie of
//! `/shared`, keyed by the link's token). A cookie rather than the account: a position is worth
//! nothing to the service, and remembering it costs no write per page turned.

use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;

const COOKIE_NAME: &str = "reading";
/// How many books' positions are kept.
const BOOKS: usize = 20;

/// A chapter and a page of it, both from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub chapter: u32,
    pub page: u32,
}

/// Every remembered position, most recent first.
fn remembered(headers: &HeaderMap) -> Vec<(String, Position)> {
    let Some(value) = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value.to_string())
    else {
        return Vec::new();
    };
    value
        .split('|')
        .take(BOOKS)
        .filter_map(|entry| {
            let mut parts = entry.split(':');
            let id = parts.next()?;
            let chapter = parts.next()?.parse().ok()?;
            let page = parts.next()?.parse().ok()?;
            let plain = !id.is_empty() && id.len() <= 64;
            let plain = plain && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            (plain && chapter > 0 && page > 0).then(|| (id.to_string(), Position { chapter, page }))
        })
        .collect()
}

/// Where the reader of this book was last opened.
pub fn of(headers: &HeaderMap, book_id: &str) -> Option<Position> {
    remembered(headers)
        .into_iter()
        .find(|(id, _)| id == book_id)
        .map(|(_, position)| position)
}

/// Where the cookie lives: the owner's pages, or the shared readers.
#[derive(Debug, Clone, Copy)]
pub enum Scope {
    Owner,
    Shared,
}

/// Adds the cookie that puts this book's position first.
pub fn remember(
    headers: &HeaderMap,
    scope: Scope,
    book_id: &str,
    at: Position,
    response: &mut Response,
) {
    let mut entries = remembered(headers);
    entries.retain(|(id, _)| id != book_id);
    entries.insert(0, (book_id.to_string(), at));
    entries.truncate(BOOKS);
    let value: Vec<String> = entries
        .iter()
        .map(|(id, p)| format!("{id}:{}:{}", p.chapter, p.page))
        .collect();
    let path = match scope {
        Scope::Owner => "/dashboard",
        Scope::Shared => "/shared",
    };
    let cookie = format!(
        "{COOKIE_NAME}={}; Path={path}; Max-Age=31536000; HttpOnly; SameSite=Lax",
        value.join("|")
    );
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::IntoResponse;

    fn with_cookie(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, value.parse().unwrap());
        headers
    }

    #[test]
    fn the_last_position_of_each_book_is_kept_most_recent_first() {
        let headers = with_cookie("lang=es; reading=b1:3:2|b2:1:1");
        assert_eq!(
            of(&headers, "b1"),
            Some(Position {
                chapter: 3,
                page: 2
            })
        );
        let mut response = ().into_response();
        let at = Position {
            chapter: 7,
            page: 1,
        };
        remember(&headers, Scope::Owner, "b2", at, &mut response);
        let set = response.headers()[SET_COOKIE].to_str().unwrap();
        assert!(
            set.starts_with("reading=b2:7:1|b1:3:2; Path=/dashboard;"),
            "{set}"
        );
    }

    #[test]
    fn a_damaged_entry_is_ignored_and_the_others_kept() {
        let headers = with_cookie("reading=b1:x:2|b\"2:1:1|b3:4:5");
        assert_eq!(of(&headers, "b1"), None);
        assert_eq!(
            of(&headers, "b3"),
            Some(Position {
                chapter: 4,
                page: 5
            })
        );
    }
}

//! The app's addresses that more than one module needs: the pages' files and live updates,
//! which the rate limits tell apart, and the links one page makes to another's.

/// The assets served outside `/assets/`, where browsers and installers look for them.
pub const AT_THE_ROOT: [&str; 2] = ["/favicon.ico", "/manifest.webmanifest"];

/// The library's live update: every book's status and progress.
pub const LIBRARY_LIVE: &str = "/dashboard/live";

/// The app's script, style sheet, icons and manifest: files every page loads, never counted
/// against any rate limit.
pub fn is_asset(path: &str) -> bool {
    path.starts_with("/assets/") || AT_THE_ROOT.contains(&path)
}

/// A page's own live update (its progress poll): counted in a budget of its own.
pub fn is_live_update(path: &str) -> bool {
    path == LIBRARY_LIVE
        || path
            .strip_prefix("/dashboard/books/")
            .is_some_and(|rest| rest.ends_with("/live") && rest.matches('/').count() == 1)
}

/// The review's address for book `id`.
pub(super) fn review_path(id: &str) -> String {
    format!("/dashboard/books/{id}/review")
}

/// The path the editor's offer of a term rename posts to.
pub(super) fn rename_path(book_id: &str) -> String {
    format!("/dashboard/books/{book_id}/terms/rename")
}

/// Passage `index` of chapter `chapter` in the owner's reader.
pub(super) fn passage_href(id: &str, chapter: u32, index: u32) -> String {
    format!("/dashboard/books/{id}/read?chapter={chapter}&near={index}#p-{index}")
}

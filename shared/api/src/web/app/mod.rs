//! The web app: the account pages (`/signin`, `/signup`, `/signout`) and, for a signed-in user,
//! the library (`/dashboard`) and a book's page (`/dashboard/books/{id}`). Server-rendered from
//! the templates in `templates/app/`, which escape everything they are given; readable and usable
//! without JavaScript (every action is a form); one script of ours (`/assets/app.js`, compiled
//! into the binary) refreshes a translating book's progress and sends large files straight to
//! storage. Every page calls the services the API calls, with the session cookie's user: the
//! pages add no rules of their own. The owner's reader is the book's editor ([`editor`]).
//!
//! Forms that change anything carry the session's CSRF token ([`csrf`]) and are refused (403)
//! without it. Pages are in English or Spanish ([`i18n`]).

mod account;
mod assets;
mod books;
mod community;
pub mod csrf;
mod editor;
mod errors;
mod failure;
mod glossaries;
pub mod i18n;
mod memory;
mod page;
mod passage;
pub(crate) mod paths;
mod proposals;
pub mod reading;
mod return_to;
mod review;
mod session;
mod settings;
mod term_rename;
mod terms;
mod xliff;

pub use self::errors::pages_for_browsers;
pub use self::failure::page_error;
pub use self::page::page;
pub use self::paths::{is_asset, is_live_update};
pub use self::session::{SignedIn, Visitor};
use crate::openapi::Routes;

/// Every page of the app (`booktr serve`).
pub fn router() -> Routes {
    pages_router()
        .merge(download_router())
        .merge(community_router())
}

/// The pages of the account, the library, books (but their downloads), glossaries, settings and
/// notifications, with the app's script and style sheet: the pages' own function on AWS.
pub fn pages_router() -> Routes {
    Routes::new()
        .merge(account::router())
        .merge(books::router())
        .merge(editor::router())
        .merge(proposals::router())
        .merge(review::router())
        .merge(settings::router())
        .merge(glossaries::router())
        .merge(memory::router())
        .merge(terms::router())
        .merge(term_rename::router())
        .merge(xliff::router())
        .merge(assets::router())
}

/// A book's downloads from its page: on AWS beside the API's downloads, in the function that
/// carries the renderers (a partial file is rendered on request).
pub fn download_router() -> Routes {
    books::download_router()
}

/// Writing in the community and its administration: on AWS beside the community's API and
/// public pages, which already carry the Markdown rendering and sanitising they need.
pub fn community_router() -> Routes {
    community::router()
}

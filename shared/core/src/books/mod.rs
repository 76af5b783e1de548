//! Books and their chapters: upload, listing, reading, editing and deletion.

mod direct;
mod error;
mod format;
pub mod lifecycle;
mod model;
pub mod record;
mod service;
mod share;
pub mod store;

pub(crate) use direct::uploads_prefix;
pub use direct::{DirectUpload, DirectUploadRequest, FormField, DIRECT_UPLOAD_TTL};
pub use error::{BooksError, FormUse};
pub use format::{sniff, BookFormat, UnsupportedFile};
pub use model::{Book, BookDetail, Chapter, MAX_UPLOAD_BYTES};
pub use service::{Books, Upload, MAX_LIST_LIMIT};
pub use share::{Share, MAX_EXPIRES_IN_DAYS};

//! The one error model: every failure is `{error, message}` with a stable machine-readable
//! `error` code. 5xx answers hide internals; the cause is logged.

use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use booktr_core::accounts::AccountsError;
use booktr_core::books::{BooksError, FormUse};
use booktr_core::developer::DeveloperError;
use booktr_core::fault::{DataError, Fault};
use booktr_core::ports::StoreError;
use booktr_core::privacy::PrivacyError;
use serde_json::json;
use tracing::error;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    /// Stable, machine-readable (docs/api.md lists them all).
    pub code: &'static str,
    /// For people; never contains internals.
    pub message: String,
    /// Seconds for `Retry-After` (429 and 503 answers).
    pub retry_after: Option<i64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn retry_after(mut self, seconds: i64) -> Self {
        self.retry_after = Some(seconds.max(1));
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub fn not_found(what: &str) -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("{what} not found"),
        )
    }

    pub fn file_too_large() -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "file_too_large",
            BooksError::TooLarge.to_string(),
        )
    }

    /// A failure that is not the caller's: logged with its cause chain, answered without it.
    pub fn internal(cause: &dyn std::error::Error) -> Self {
        let mut chain = cause.to_string();
        let mut source = cause.source();
        while let Some(s) = source {
            chain.push_str(": ");
            chain.push_str(&s.to_string());
            source = s.source();
        }
        error!(cause = %chain, "request failed");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "something went wrong on our side; it has been logged",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.code, "message": self.message });
        let mut response = (self.status, axum::Json(body)).into_response();
        // Kept on the answer for the layer that shows a browser the failure as a page
        // (`crate::web::app::pages_for_browsers`).
        response.extensions_mut().insert(self.clone());
        let retry_after = match self.retry_after {
            Some(seconds) => Some(seconds),
            None => (self.status == StatusCode::SERVICE_UNAVAILABLE).then_some(5),
        };
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert("retry-after", axum::http::HeaderValue::from(seconds));
        }
        response
    }
}

/// Only a backend that is down is worth trying again; the store's other answers reaching a
/// caller are bugs.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(_) => {
                error!(cause = %e, "backend unavailable");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "service_unavailable",
                    "a backend is unavailable; try again shortly",
                )
            }
            other => ApiError::internal(&other),
        }
    }
}

/// A fault fails again on the next try: 500, with the cause in the log.
impl From<Fault> for ApiError {
    fn from(e: Fault) -> Self {
        ApiError::internal(&e)
    }
}

impl From<DataError> for ApiError {
    fn from(e: DataError) -> Self {
        match e {
            DataError::Store(s) => s.into(),
            DataError::Fault(f) => f.into(),
        }
    }
}

impl From<AccountsError> for ApiError {
    fn from(e: AccountsError) -> Self {
        match e {
            AccountsError::Invalid(m) => ApiError::bad_request(m),
            AccountsError::WrongPassword => ApiError::bad_request(e.to_string()),
            AccountsError::EmailTaken => {
                ApiError::new(StatusCode::CONFLICT, "email_taken", e.to_string())
            }
            AccountsError::KeyLimitReached { .. } => {
                ApiError::new(StatusCode::BAD_REQUEST, "key_limit_reached", e.to_string())
            }
            AccountsError::NotFound => ApiError::not_found("resource"),
            AccountsError::Unauthenticated(m) => ApiError::unauthorized(m),
            AccountsError::RateLimited {
                message,
                retry_after,
            } => ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", message)
                .retry_after(retry_after),
            AccountsError::Busy(busy) => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "busy", busy.to_string())
                    .retry_after(1)
            }
            AccountsError::Store(s) => s.into(),
            AccountsError::Fault(f) => f.into(),
        }
    }
}

impl From<PrivacyError> for ApiError {
    fn from(e: PrivacyError) -> Self {
        match e {
            PrivacyError::Invalid(m) => ApiError::bad_request(m),
            PrivacyError::Store(s) => s.into(),
            PrivacyError::Fault(f) => f.into(),
            // Only the purge job meets it; no route purges.
            e @ PrivacyError::StillOpen => ApiError::internal(&e),
            PrivacyError::Accounts(e) => e.into(),
            PrivacyError::Events(e) => e.into(),
            PrivacyError::Glossaries(e) => e.into(),
            PrivacyError::Developer(e) => e.into(),
        }
    }
}

/// The way on for a direct upload that is over: the route that offers a new one.
const ASK_FOR_A_NEW_UPLOAD: &str = "ask for a new one with POST /api/uploads";

impl From<BooksError> for ApiError {
    fn from(e: BooksError) -> Self {
        match e {
            BooksError::Invalid(m) => ApiError::bad_request(m),
            BooksError::UnsupportedFile(e) => {
                ApiError::new(StatusCode::BAD_REQUEST, "unsupported_file", e.to_string())
            }
            BooksError::TooLarge => ApiError::file_too_large(),
            BooksError::NotFound => ApiError::not_found("book"),
            BooksError::UploadNotFound => ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("{e}; {ASK_FOR_A_NEW_UPLOAD}"),
            ),
            BooksError::UploadOver(m) => {
                ApiError::bad_request(format!("{m}; {ASK_FOR_A_NEW_UPLOAD}"))
            }
            BooksError::QuotaExceeded(m) => {
                ApiError::new(StatusCode::BAD_REQUEST, "quota_exceeded", m)
            }
            BooksError::FormUsed(used) => {
                let message = match used {
                    FormUse::PostedAlready => format!("{used} ({ASK_FOR_A_NEW_UPLOAD})"),
                    FormUse::Over => format!("{used}; {ASK_FOR_A_NEW_UPLOAD}"),
                };
                ApiError::new(StatusCode::CONFLICT, "form_used", message)
            }
            BooksError::Store(s) => s.into(),
            BooksError::Fault(f) => f.into(),
        }
    }
}

impl From<DeveloperError> for ApiError {
    fn from(e: DeveloperError) -> Self {
        match e {
            DeveloperError::InvalidKey { message, .. } => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_key", message)
            }
            DeveloperError::ProviderUnavailable(message) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "provider_unavailable",
                message,
            ),
            // Reading keys back is the jobs' business; a route never opens one.
            DeveloperError::Unreadable(_) => ApiError::internal(&e),
            DeveloperError::Store(s) => s.into(),
            DeveloperError::Fault(f) => f.into(),
        }
    }
}

pub async fn no_route(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no route for {method} {}", uri.path()),
    )
}

pub async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{method} is not allowed on {}", uri.path()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use booktr_core::books::sniff;
    use booktr_core::translation::TranslationError;

    #[test]
    fn a_fault_is_a_500_and_only_a_backend_down_is_a_503_to_try_again() {
        let corrupt = Fault::Corrupt {
            what: "item BOOK#1/BOOK".into(),
            detail: "a missing or invalid 'status'".into(),
        };
        let answer = ApiError::from(DataError::Fault(corrupt));
        assert_eq!(
            (answer.status, answer.code),
            (StatusCode::INTERNAL_SERVER_ERROR, "internal_error")
        );
        assert!(!answer.message.contains("BOOK#1"), "{}", answer.message);
        let internal = ApiError::from(AccountsError::Fault(Fault::Internal("hashing".into())));
        assert_eq!(internal.status, StatusCode::INTERNAL_SERVER_ERROR);
        let down = ApiError::from(DataError::Store(StoreError::Unavailable("down".into())));
        assert_eq!(
            (down.status, down.code),
            (StatusCode::SERVICE_UNAVAILABLE, "service_unavailable")
        );
    }

    #[test]
    fn a_books_error_reaching_translation_keeps_its_code() {
        let unsupported = sniff("book.mobi", b"hello").unwrap_err();
        let answer = ApiError::from(TranslationError::from(BooksError::UnsupportedFile(
            unsupported,
        )));
        assert_eq!(
            (answer.status, answer.code),
            (StatusCode::BAD_REQUEST, "unsupported_file")
        );
        let answer = ApiError::from(TranslationError::from(BooksError::TooLarge));
        assert_eq!(answer.code, "file_too_large");
        let answer = ApiError::from(TranslationError::MissingText(3));
        assert_eq!(answer.code, "internal_error");
    }
}

//! What the domain's own data can fail with besides its backend.
//!
//! [`StoreError`] says only that the storage backend failed or refused. What the domain finds
//! wrong with what it reads or writes, or with a part of the process, is a [`Fault`]: one type
//! every domain shares, because the answer to it is the same everywhere (the API logs it and
//! answers 500 `internal_error`; a job that meets it fails at once, since another try finds
//! the same data). A failure that belongs to one domain (a missing chapter text, a password
//! check too many) is a variant of that domain's error instead.

use crate::ports::StoreError;

/// A failure inside the service that another try does not mend.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
    /// Stored data that does not have the shape the domain wrote: an item missing a field or
    /// holding one it cannot read, a stored document that does not decode.
    #[error("{what} is corrupt: {detail}")]
    Corrupt { what: String, detail: String },
    /// What the domain was to store or send did not encode (a bug: the same data fails again).
    #[error("encoding {what}: {cause}")]
    Encoding {
        what: &'static str,
        #[source]
        cause: serde_json::Error,
    },
    /// A part of the process failed that no caller can mend: a semaphore closed, the password
    /// hasher failed, writes that cannot all hold at once.
    #[error("{0}")]
    Internal(String),
}

impl Fault {
    /// `value` did not encode as JSON; `what` names it ("the preferences", "a job").
    pub fn encoding(what: &'static str) -> impl FnOnce(serde_json::Error) -> Fault {
        move |cause| Fault::Encoding { what, cause }
    }
}

/// What reading or writing the domain's data fails with: its backend, or what it found.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The backend failed or refused (see [`StoreError`]).
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Fault(#[from] Fault),
}

/// `From<DataError>` for each domain error with a `Store(StoreError)` and a `Fault(Fault)`
/// variant, so that `?` keeps the two apart.
macro_rules! from_data_error {
    ($($error:ty),+ $(,)?) => {
        $(impl From<$crate::fault::DataError> for $error {
            fn from(e: $crate::fault::DataError) -> Self {
                match e {
                    $crate::fault::DataError::Store(s) => Self::Store(s),
                    $crate::fault::DataError::Fault(f) => Self::Fault(f),
                }
            }
        })+
    };
}
pub(crate) use from_data_error;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corrupt_item_keeps_apart_from_a_store_failure() {
        let e: DataError = Fault::Corrupt {
            what: "item BOOK#1/META".into(),
            detail: "a missing or invalid 'status'".into(),
        }
        .into();
        assert!(matches!(e, DataError::Fault(Fault::Corrupt { .. })));
        assert_eq!(
            e.to_string(),
            "item BOOK#1/META is corrupt: a missing or invalid 'status'"
        );
    }
}

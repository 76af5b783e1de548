//! The wire format: the request and response bodies as the API's JSON carries them, with their
//! OpenAPI schemas. The domain's types say what a book, a run or an account is; these say how
//! the API shows and reads them, one module per domain, and convert from the domain's (a
//! response) or into them (a request). Each is declared with `wire!`, which derives serde and
//! `ToSchema` on the struct and writes the conversion field by field, naming every field of the
//! domain's type: a field added there does not compile until the wire shows it or hides it.
//!
//! The domain's string enums (`BookStatus`, `Role`, ...) travel as they are; their schemas are
//! made here from the domain's own list of names (`types`).

pub mod accounts;
pub mod books;
pub mod community;
pub mod developer;
pub mod email;
pub mod events;
pub mod flagged;
pub mod glossaries;
pub mod memory;
pub mod passage_terms;
pub mod passages;
pub mod preferences;
pub mod privacy;
pub mod proposals;
pub mod term_list;
pub mod translation;
pub mod types;
pub mod usage;
pub mod xliff;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer};

/// A value made from its counterpart on the other side of the wire: a response body from the
/// domain's value, a domain value from a request body. Values both sides share (strings,
/// numbers, times, the domain's string enums) are their own counterparts; vectors, options and
/// maps carry their elements across.
pub trait Mirror<T> {
    fn mirror(from: T) -> Self;
}

/// Makes each type its own counterpart: it crosses the wire as it is.
macro_rules! as_themselves {
    ($($t:ty),* $(,)?) => {
        $(impl $crate::wire::Mirror<$t> for $t {
            fn mirror(from: $t) -> Self {
                from
            }
        })*
    };
}
pub(crate) use as_themselves;

as_themselves!(
    String,
    &'static str,
    bool,
    u8,
    u16,
    u32,
    u64,
    i64,
    usize,
    f64,
    DateTime<Utc>,
    serde_json::Value,
);

impl<T, W: Mirror<T>> Mirror<Vec<T>> for Vec<W> {
    fn mirror(from: Vec<T>) -> Self {
        from.into_iter().map(W::mirror).collect()
    }
}

impl<T, W: Mirror<T>> Mirror<Option<T>> for Option<W> {
    fn mirror(from: Option<T>) -> Self {
        from.map(W::mirror)
    }
}

impl<T, W: Mirror<T>> Mirror<BTreeMap<String, T>> for BTreeMap<String, W> {
    fn mirror(from: BTreeMap<String, T>) -> Self {
        from.into_iter().map(|(k, v)| (k, W::mirror(v))).collect()
    }
}

/// Declares a wire type and its conversion.
///
/// `pub struct Book from domain::Book, hiding user_id, run { ... }` is a response body
/// (`Serialize`) made from the domain's value; `hiding` names the domain's fields the wire does
/// not show. `pub struct NewPost into domain::NewPost { ... }` is a request body
/// (`Deserialize`) that becomes the domain's value. Attributes (docs, serde, schema) go on the
/// struct and its fields as on any derive; the docs are the schema's descriptions.
macro_rules! wire {
    (
        $(#[$meta:meta])*
        pub struct $name:ident from $domain:path $(, hiding $($hidden:ident),+)? {
            $($(#[$field_meta:meta])* pub $field:ident: $ty:ty),* $(,)?
        }
    ) => {
        #[derive(serde::Serialize, utoipa::ToSchema)]
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty),*
        }

        impl $crate::wire::Mirror<$domain> for $name {
            fn mirror(from: $domain) -> Self {
                let $domain { $($field,)* $($($hidden: _,)+)? } = from;
                $name { $($field: $crate::wire::Mirror::mirror($field)),* }
            }
        }

        impl From<$domain> for $name {
            fn from(from: $domain) -> Self {
                $crate::wire::Mirror::mirror(from)
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident into $domain:path {
            $($(#[$field_meta:meta])* pub $field:ident: $ty:ty),* $(,)?
        }
    ) => {
        #[derive(serde::Deserialize, utoipa::ToSchema)]
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty),*
        }

        impl $crate::wire::Mirror<$name> for $domain {
            fn mirror(from: $name) -> Self {
                let $name { $($field),* } = from;
                $domain { $($field: $crate::wire::Mirror::mirror($field)),* }
            }
        }

        impl From<$name> for $domain {
            fn from(from: $name) -> Self {
                $crate::wire::Mirror::mirror(from)
            }
        }
    };
}
pub(crate) use wire;

/// Declares a wire enum of unit variants and its conversion from the domain's, variant by
/// variant (the names are serde's, from the attributes given).
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident from $domain:path { $($variant:ident),+ $(,)? }
    ) => {
        #[derive(serde::Serialize, utoipa::ToSchema)]
        $(#[$meta])*
        pub enum $name {
            $($variant),+
        }

        impl $crate::wire::Mirror<$domain> for $name {
            fn mirror(from: $domain) -> Self {
                use $domain as Domain;
                match from {
                    $(Domain::$variant => $name::$variant),+
                }
            }
        }
    };
}
pub(crate) use wire_enum;

/// Tells a field given as `null` (`Some(None)`) from one left out (`None`); with
/// `#[serde(default, deserialize_with = "present")]`.
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

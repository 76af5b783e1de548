//! The values every domain shares. The domain's string enums travel as they are: their schemas
//! are made here from the domain's own names (`ALL`, `as_str`), so they cannot drift apart.

use booktr_core::types as domain;
use serde::Serialize;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{ObjectBuilder, RefOr, Type};

use super::{as_themselves, Mirror};

macro_rules! named_strings {
    ($($name:ident),+ $(,)?) => {
        $(
            #[doc = concat!("The schema of the domain's `", stringify!($name), "`: one of its names.")]
            pub struct $name;

            impl utoipa::PartialSchema for $name {
                fn schema() -> RefOr<Schema> {
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some(domain::$name::ALL.iter().map(|v| v.as_str())))
                        .into()
                }
            }

            impl utoipa::ToSchema for $name {}

            as_themselves!(domain::$name);
        )+
    };
}

named_strings!(Role, Plan, Scope, BookStatus, ChapterStatus);

/// An email address: trimmed, lower-cased, one `@` with a non-empty local part and domain.
/// Deliberately permissive (no TLD required, so `admin@localhost` works on a laptop).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(transparent)]
pub struct Email(String);

impl Mirror<domain::Email> for Email {
    fn mirror(from: domain::Email) -> Self {
        Email(from.as_str().to_owned())
    }
}

//! Newtypes at the edge: values that parse once and cannot be invalid afterwards.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A value that failed to parse; the message is safe to show to the caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidValue(pub String);

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name { $(#[serde(rename = $text)] $variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = InvalidValue;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(InvalidValue(format!(
                        "'{s}' is not a valid {}; expected one of: {}",
                        stringify!($name),
                        [$($text),+].join(", ")
                    ))),
                }
            }
        }
    };
}

string_enum!(
    /// What a user may do beyond their own data.
    Role { User => "USER", Admin => "ADMIN", SuperAdmin => "SUPER_ADMIN", Dev => "DEV" }
);

string_enum!(
    /// The billing plan, which sets quotas and key limits.
    Plan { Free => "FREE", Pro => "PRO", Business => "BUSINESS" }
);

string_enum!(
    /// What an API key may do: `read` allows GET and HEAD only; `write` everything else.
    Scope { Read => "read", Write => "write" }
);

string_enum!(
    /// The lifecycle of a book (see the state table in docs/api.md).
    BookStatus {
        Uploaded => "UPLOADED",
        Extracting => "EXTRACTING",
        Extracted => "EXTRACTED",
        Translating => "TRANSLATING",
        Paused => "PAUSED",
        Translated => "TRANSLATED",
        Generating => "GENERATING",
        Completed => "COMPLETED",
        Error => "ERROR",
    }
);

string_enum!(
    /// The lifecycle of one chapter's translation.
    ChapterStatus {
        Pending => "PENDING",
        Translating => "TRANSLATING",
        Completed => "COMPLETED",
        Error => "ERROR",
    }
);

impl Plan {
    /// How many API keys a user on this plan may hold at once (the spec's table).
    pub fn api_key_limit(self) -> usize {
        match self {
            Plan::Free => 2,
            Plan::Pro => 10,
            Plan::Business => 50,
        }
    }

    /// The translation models the plan may use (a gap in the spec; documented in docs/api.md):
    /// Free gets the three fast models, paid plans all six. Role DEV may use every model.
    pub fn allowed_models(self) -> &'static [&'static str] {
        const FAST: &[&str] = &["gpt-4o-mini", "claude-3-haiku", "gemini-2.0-flash"];
        const ALL: &[&str] = &[
            "gpt-4o-mini",
            "gpt-4o",
            "claude-3-haiku",
            "claude-sonnet-4-20250514",
            "gemini-2.0-flash",
            "gemini-1.5-pro",
        ];
        match self {
            Plan::Free => FAST,
            Plan::Pro | Plan::Business => ALL,
        }
    }

    /// Whether the plan's jobs go first (see docs/api.md's usage section for what that buys).
    pub fn has_priority(self) -> bool {
        matches!(self, Plan::Pro | Plan::Business)
    }

    pub fn display_name(self) -> &'static str {
        match self {
            Plan::Free => "Free",
            Plan::Pro => "Pro",
            Plan::Business => "Business",
        }
    }
}

/// An email address: trimmed, lower-cased, one `@` with a non-empty local part and domain.
/// Deliberately permissive (no TLD required, so `admin@localhost` works on a laptop).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Email(String);

impl Email {
    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        let s = raw.trim().to_lowercase();
        let invalid = || InvalidValue(format!("'{}' is not a valid email address", raw.trim()));
        let (local, domain) = s.split_once('@').ok_or_else(invalid)?;
        let bad_char = |c: char| c.is_whitespace() || c.is_control() || c == '@';
        if local.is_empty()
            || domain.is_empty()
            || s.len() > 254
            || local.chars().any(bad_char)
            || domain.chars().any(bad_char)
            || domain.starts_with('.')
            || domain.ends_with('.')
        {
            return Err(invalid());
        }
        Ok(Email(s))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Email {
    /// For logs, which must not hold addresses: `a***@example.com`.
    pub fn masked(&self) -> String {
        crate::ports::mail::masked_email(&self.0)
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A BCP 47-style language code: a 2-3 letter primary subtag (lower-cased) and optional
/// subtags such as a script or region (`pt-BR`, `zh-Hant`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LanguageCode(String);

impl LanguageCode {
    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        let raw = raw.trim();
        let invalid = || {
            InvalidValue(format!(
                "'{raw}' is not a language code (expected e.g. 'en', 'es', 'pt-BR')"
            ))
        };
        let mut parts = raw.split(['-', '_']);
        let primary = parts.next().unwrap_or_default();
        if !(2..=3).contains(&primary.len()) || !primary.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(invalid());
        }
        let mut code = primary.to_ascii_lowercase();
        for part in parts {
            if !(2..=8).contains(&part.len()) || !part.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(invalid());
            }
            code.push('-');
            code.push_str(&match part.len() {
                2 => part.to_ascii_uppercase(),
                4 => {
                    let mut s = part.to_ascii_lowercase();
                    s[..1].make_ascii_uppercase();
                    s
                }
                _ => part.to_string(),
            });
        }
        Ok(LanguageCode(code))
    }

    /// The code used when the language of a text is not known.
    pub fn undetermined() -> Self {
        LanguageCode("und".into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LanguageCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_masked_email_keeps_its_first_letter_and_its_domain() {
        assert_eq!(
            Email::parse("Ana@Example.com").unwrap().masked(),
            "a***@example.com"
        );
        assert_eq!(crate::ports::mail::masked_email("nobody"), "***");
    }

    use super::*;

    #[test]
    fn emails_are_normalised_and_checked() {
        assert_eq!(
            Email::parse(" Ana@Example.COM ").map(|e| e.0),
            Ok("ana@example.com".into())
        );
        assert!(Email::parse("admin@localhost").is_ok());
        for bad in ["", "a", "@b", "a@", "a b@c", "a@b@c", "a@.com"] {
            assert!(Email::parse(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn language_codes_take_the_canonical_case() {
        assert_eq!(
            LanguageCode::parse("pt_br").map(|c| c.0),
            Ok("pt-BR".into())
        );
        assert_eq!(
            LanguageCode::parse("ZH-hant").map(|c| c.0),
            Ok("zh-Hant".into())
        );
        for bad in ["", "e", "english", "e1", "en-", "en-x"] {
            assert!(
                LanguageCode::parse(bad).is_err(),
                "{bad} should be rejected"
            );
        }
    }

    #[test]
    fn enums_parse_their_wire_names_only() {
        assert_eq!("SUPER_ADMIN".parse::<Role>(), Ok(Role::SuperAdmin));
        assert!("super_admin".parse::<Role>().is_err());
        assert_eq!("read".parse::<Scope>(), Ok(Scope::Read));
        assert_eq!(Plan::Business.api_key_limit(), 50);
    }
}

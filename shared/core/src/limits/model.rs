//! What the rate limits count: who is counted.

/// Who is counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    User(String),
    /// A client address (its text form).
    Address(String),
    /// Password attempts from one address.
    PasswordAddress(String),
    /// Sign-in attempts for one email; stored hashed, so counters hold no address book.
    SignInEmail(String),
    /// Sign-in attempts at an email (normalised) from an address.
    SignInEmailFromAddress {
        email: String,
        address: String,
    },
}

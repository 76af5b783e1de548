//! Adapters of the ports that reach outside the service: [`ReqwestHttp`] for webhook deliveries
//! (behind an SSRF guard) and the mailers ([`LogMailer`], [`SmtpMailer`]).

pub mod http;
pub mod mail;

pub use http::{is_forbidden, ReqwestHttp};
pub use mail::{LogMailer, SmtpMailer};

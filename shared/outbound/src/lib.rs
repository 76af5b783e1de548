//! Adapters of the ports that reach outside the service: [`ReqwestHttp`] for webhook deliveries
//! (behind an SSRF guard), the mailers ([`SmtpMailer`], [`OutboxMailer`], [`LogMailer`]) and the model providers
//! ([`EnvModels`]).

pub mod http;
pub mod mail;
pub mod models;

pub use http::{is_forbidden, ReqwestHttp};
pub use mail::{LogMailer, OutboxMailer, SmtpMailer};
pub use models::EnvModels;

//! Why an upstream's adapter could not be built. Each problem says where it
//! lies, so the runtime reports it at its config path without reading the text.

use std::fmt::Display;

/// One problem building an upstream's adapter; every problem is reported, not
/// just the first, so an adapter's build returns a list of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// At a key of the upstream's own config (`client_id`, `secrets.api_key`,
    /// `profile`): reported at that key's path.
    #[error("{key}: {message}")]
    AtKey { key: String, message: String },
    /// Somewhere the upstream's config names (a profile's operation, a mapping
    /// file) or nowhere in particular (its HTTP client): reported at the
    /// upstream, with the message saying where.
    #[error("{0}")]
    Upstream(String),
}

impl BuildError {
    pub fn at_key(key: impl Into<String>, message: impl Display) -> Self {
        Self::AtKey {
            key: key.into(),
            message: message.to_string(),
        }
    }

    pub fn upstream(message: impl Into<String>) -> Self {
        Self::Upstream(message.into())
    }
}

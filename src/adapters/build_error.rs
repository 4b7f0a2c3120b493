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
    /// At a key of the upstream's profile file (`inventory.records`): the
    /// runtime adds the file and line.
    #[error("profile {key}: {message}")]
    InProfile { key: String, message: String },
    /// In a mapping file the profile or config names: at a key of it when
    /// the problem has one (`fields.make`), else about the file as a whole.
    #[error("{}", mapping_message(reference, key.as_deref(), message))]
    InMapping {
        reference: String,
        key: Option<String>,
        message: String,
    },
}

fn mapping_message(reference: &str, key: Option<&str>, message: &str) -> String {
    match key {
        Some(key) => format!("mapping {reference}: {key}: {message}"),
        None => format!("mapping {reference}: {message}"),
    }
}

/// Splits `key: message`, when the text starts with a key (a dotted name
/// without spaces); the compilers of profiles and mappings write their
/// problems that way.
fn split_key(text: &str) -> (Option<String>, String) {
    match text.split_once(": ") {
        Some((key, message)) if !key.is_empty() && !key.contains([' ', '/', '\\']) => {
            (Some(key.to_owned()), message.to_owned())
        }
        _ => (None, text.to_owned()),
    }
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

    /// A problem written `key: message` at a key of the profile.
    pub fn in_profile(text: impl Display) -> Self {
        match split_key(&text.to_string()) {
            (Some(key), message) => Self::InProfile { key, message },
            (None, message) => Self::Upstream(format!("profile: {message}")),
        }
    }

    /// A problem in mapping `reference`, written `key: message` when it has a key.
    pub fn in_mapping(reference: &str, text: impl Display) -> Self {
        let (key, message) = split_key(&text.to_string());
        Self::InMapping {
            reference: reference.to_owned(),
            key,
            message,
        }
    }
}

//! Where a secret comes from. Values are held in `secrecy` types from the moment
//! they are read, so they cannot reach logs through `Debug`.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use secrecy::SecretString;
use serde::{Deserialize, Deserializer};

/// A secret given inline (for demos and tests), from an environment variable, or from a file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SecretSource {
    /// Name of an environment variable holding the secret.
    Env(String),
    /// Path of a file holding the secret (trailing whitespace is trimmed).
    File(PathBuf),
    /// The secret itself. Prefer `env` or `file` outside demos.
    Value(#[schemars(with = "String")] InlineSecret),
}

/// An inline secret, wrapped as soon as it is parsed.
#[derive(Debug, Clone)]
pub struct InlineSecret(pub SecretString);

impl<'de> Deserialize<'de> for InlineSecret {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(SecretString::from(String::deserialize(d)?)))
    }
}

/// Reads the secret. `base` resolves relative file paths (the config file's folder).
pub fn resolve_secret(source: &SecretSource, base: &Path) -> Result<SecretString, String> {
    match source {
        SecretSource::Value(v) => Ok(v.0.clone()),
        SecretSource::Env(name) => match std::env::var(name) {
            Ok(v) if !v.is_empty() => Ok(SecretString::from(v)),
            _ => Err(format!("environment variable {name} is not set")),
        },
        SecretSource::File(path) => {
            let path = base.join(path);
            std::fs::read_to_string(&path)
                .map(|s| SecretString::from(s.trim_end().to_owned()))
                .map_err(|e| format!("cannot read secret file {}: {e}", path.display()))
        }
    }
}

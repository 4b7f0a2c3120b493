//! Parsing a TOML config with every problem reported, each with its path.

use std::path::Path;

use serde_json::Value;

use super::Config;
use super::error::{ConfigError, ConfigErrors};

/// Reads and parses a config file; see [`from_toml_str`].
pub fn load_file(path: &Path) -> Result<Config, ConfigErrors> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new("", format!("cannot read {}: {e}", path.display())))?;
    from_toml_str(&text)
}

/// Parses TOML into a [`Config`], then runs the pure [`Config::validate`].
pub fn from_toml_str(text: &str) -> Result<Config, ConfigErrors> {
    let raw: toml::Table = toml::from_str(text).map_err(|e| {
        let message = e.message().to_owned();
        let at = e
            .span()
            .map(|s| line_col(text, s.start))
            .unwrap_or_default();
        ConfigError::new(at, message)
    })?;
    let json = serde_json::to_value(&raw).map_err(|e| ConfigError::new("", e.to_string()))?;
    let structural = schema_errors(&json);
    if !structural.is_empty() {
        return Err(ConfigErrors(structural));
    }
    // A value of the right type that still does not read (a duration, say)
    // is reported at its path, and without the value.
    let config: Config = serde_path_to_error::deserialize(json).map_err(|e| {
        let path = e.path().to_string();
        let message = crate::contract::redact::without_values(&e.inner().to_string());
        ConfigError::new(if path == "." { String::new() } else { path }, message)
    })?;
    let semantic = config.validate();
    if semantic.is_empty() {
        Ok(config)
    } else {
        Err(ConfigErrors(semantic))
    }
}

fn line_col(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, str::len) + 1;
    format!("line {line}, column {col}")
}

/// Checks the document against the schema derived from [`Config`], so unknown
/// keys and wrong types are all reported together rather than one per run.
fn schema_errors(json: &Value) -> Vec<ConfigError> {
    let schema = serde_json::to_value(schemars::schema_for!(Config)).unwrap_or(Value::Null);
    let validator = match jsonschema::validator_for(&schema) {
        Ok(v) => v,
        Err(e) => return vec![ConfigError::new("", format!("internal schema error: {e}"))],
    };
    // Patterns are not structural (serde does not enforce them): validate() checks
    // those values, so a bad phone number does not hide every other problem.
    let mut errors: Vec<ConfigError> = validator
        .iter_errors(json)
        .filter(|e| {
            !matches!(
                e.kind(),
                jsonschema::error::ValidationErrorKind::Pattern { .. }
            )
        })
        .flat_map(|e| super::problems::problems(&e))
        .collect();
    errors.sort_by(|a, b| {
        document_order(&a.path)
            .cmp(&document_order(&b.path))
            .then(a.message.cmp(&b.message))
    });
    errors.dedup();
    errors
}

/// Sort key that puts `dealerships[2]` before `dealerships[10]`.
fn document_order(path: &str) -> Vec<(String, usize)> {
    path.split(['.', '['])
        .map(
            |segment| match segment.strip_suffix(']').and_then(|n| n.parse().ok()) {
                Some(index) => (String::new(), index),
                None => (segment.to_owned(), 0),
            },
        )
        .collect()
}

//! A tool result as it travels: JSON text made once, shared, never copied.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

/// A tool result and its JSON text, serialized once: the text is both the
/// MCP text content and what the result size limit measures. Cheap to clone:
/// a cached answer is shared by every caller, never copied.
#[derive(Debug, Clone)]
pub struct Payload(Arc<Serialized>);

#[derive(Debug)]
struct Serialized {
    text: String,
    /// The result as a JSON tree, only for the paths that need one (stdio,
    /// progress, resources); made from `text` on first use.
    value: OnceLock<Value>,
    /// `text` as a JSON string literal, made on first use and kept with the entry.
    quoted: OnceLock<Bytes>,
    /// The estimated tokens of `text` (see `tokens`), counted once per result.
    tokens: OnceLock<usize>,
    /// The result as the other front door renders it (the AAP door's
    /// vehicles), made on first use: a cached answer is translated once.
    rendered: OnceLock<Option<Arc<str>>>,
}

/// Lends the JSON text to a `Bytes` without copying it.
struct TextOwner(Arc<Serialized>);

impl AsRef<[u8]> for TextOwner {
    fn as_ref(&self) -> &[u8] {
        self.0.text.as_bytes()
    }
}

impl Payload {
    /// A result serialized straight from its type, without a JSON tree.
    pub fn serialize(result: &impl Serialize) -> Result<Self, serde_json::Error> {
        Ok(Self(Arc::new(Serialized {
            text: serde_json::to_string(result)?,
            value: OnceLock::new(),
            quoted: OnceLock::new(),
            tokens: OnceLock::new(),
            rendered: OnceLock::new(),
        })))
    }

    pub fn value(&self) -> &Value {
        self.0
            .value
            .get_or_init(|| serde_json::from_str(&self.0.text).unwrap_or(Value::Null))
    }

    /// The result as JSON text.
    pub fn text(&self) -> &str {
        &self.0.text
    }

    /// What the text costs a model to read, estimated from above (`tokens`).
    pub fn estimated_tokens(&self) -> usize {
        *self
            .0
            .tokens
            .get_or_init(|| super::tokens::estimate(&self.0.text))
    }

    /// The JSON text as bytes that share this payload's memory: an answer can
    /// carry it without a copy.
    pub fn text_bytes(&self) -> Bytes {
        Bytes::from_owner(TextOwner(self.0.clone()))
    }

    /// The result as the other front door renders it, made by `render` from
    /// the text on first use and kept with the entry. One rendering per
    /// payload: a payload is one tool's answer for one dealership, and the
    /// AAP door renders each tool's answers one way.
    pub fn rendered(&self, render: impl FnOnce(&str) -> Option<String>) -> Option<Arc<str>> {
        self.0
            .rendered
            .get_or_init(|| render(&self.0.text).map(Arc::from))
            .clone()
    }

    /// The JSON text as a JSON string literal (quoted and escaped), as the MCP
    /// text content carries it on the wire; made once per payload.
    pub fn quoted_text(&self) -> Bytes {
        self.0
            .quoted
            .get_or_init(|| {
                serde_json::to_string(&self.0.text)
                    .map(Bytes::from)
                    .unwrap_or_else(|_| Bytes::from_static(b"\"\""))
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_tree_and_quoted_text_agree() {
        #[derive(Serialize)]
        struct Answer<'a> {
            make: &'a str,
            price: u64,
        }
        let typed = Payload::serialize(&Answer {
            make: "Ford \"F-150\"",
            price: 4_299_900,
        })
        .unwrap();
        assert_eq!(
            typed.value(),
            &json!({ "make": "Ford \"F-150\"", "price": 4_299_900 })
        );
        assert_eq!(typed.text(), r#"{"make":"Ford \"F-150\"","price":4299900}"#);
        assert_eq!(typed.text_bytes(), typed.text().as_bytes());
        let unquoted: String = serde_json::from_slice(&typed.quoted_text()).unwrap();
        assert_eq!(unquoted, typed.text());
    }
}

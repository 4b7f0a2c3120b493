//! Request parameters, form- or query-encoded. A parameter given twice is an
//! error (RFC 6749 §3.1, §3.2), so they are read by hand rather than into a map
//! that would keep one of them.

use std::collections::HashMap;

pub(super) struct Params(HashMap<String, String>);

impl Params {
    /// The parameters, or the name of one that was given more than once.
    pub fn parse(encoded: &[u8]) -> Result<Self, String> {
        let mut map = HashMap::new();
        for (name, value) in form_urlencoded::parse(encoded) {
            if map.insert(name.to_string(), value.into_owned()).is_some() {
                return Err(name.into_owned());
            }
        }
        Ok(Self(map))
    }

    /// A parameter's value; an empty one counts as absent (RFC 6749 §3.1).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// Whether `s` is a PKCE code verifier or S256 challenge: 43 to 128 unreserved
/// characters (RFC 7636 §4.1, §4.2).
pub(super) fn is_pkce_string(s: &str) -> bool {
    (43..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

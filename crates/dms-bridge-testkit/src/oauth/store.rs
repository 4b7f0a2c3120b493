//! The server's memory: registered clients, authorization codes and refresh
//! tokens, each in a map of bounded size that forgets its oldest entries first,
//! so a demo server left running cannot be grown without bound.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use serde::Serialize;

/// A map that keeps at most `cap` entries, evicting the oldest inserted.
pub(super) struct Bounded<V> {
    map: HashMap<String, V>,
    /// Keys in insertion order; may hold keys since removed, compacted when it
    /// grows past twice the cap.
    order: VecDeque<String>,
    cap: usize,
}

impl<V> Bounded<V> {
    pub fn new(cap: usize) -> Self {
        Self {
            map: HashMap::new(),
            order: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    pub fn insert(&mut self, key: String, value: V) {
        if self.map.insert(key.clone(), value).is_none() {
            self.order.push_back(key);
        }
        while self.map.len() > self.cap {
            match self.order.pop_front() {
                Some(oldest) => {
                    self.map.remove(&oldest);
                }
                None => break,
            }
        }
        if self.order.len() > 2 * self.cap {
            let map = &self.map;
            self.order.retain(|k| map.contains_key(k));
        }
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.map.get(key)
    }

    pub fn remove(&mut self, key: &str) -> Option<V> {
        self.map.remove(key)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }
}

/// A client the server knows: registered (RFC 7591) or fetched from its client
/// ID metadata document. Serialized as the registration answer.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Client {
    pub client_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    pub redirect_uris: Vec<String>,
    pub grant_types: Vec<String>,
    pub response_types: Vec<String>,
    pub token_endpoint_auth_method: String,
    pub client_id_issued_at: i64,
    /// When a metadata document was fetched (`None` for registered clients).
    #[serde(skip)]
    pub fetched: Option<Instant>,
}

/// What an authorization code stands for, until redeemed or expired.
pub(super) struct CodeGrant {
    pub client_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub resource: String,
    pub scopes: Vec<String>,
    pub user: String,
    pub issued: Instant,
}

/// What a refresh token stands for, until used (it is rotated) or expired.
pub(super) struct RefreshGrant {
    pub client_id: String,
    pub resource: String,
    pub scopes: Vec<String>,
    pub user: String,
    pub issued: Instant,
}

/// Everything the server remembers, behind one mutex.
pub(super) struct State {
    pub clients: Bounded<Client>,
    pub codes: Bounded<CodeGrant>,
    pub refresh_tokens: Bounded<RefreshGrant>,
}

#[cfg(test)]
mod tests {
    use super::Bounded;

    #[test]
    fn the_oldest_entries_go_first_and_removals_do_not_grow_the_order() {
        let mut map = Bounded::new(2);
        map.insert("a".into(), 1);
        map.insert("b".into(), 2);
        map.insert("c".into(), 3);
        assert_eq!(map.len(), 2);
        assert!(map.get("a").is_none());
        assert_eq!(map.get("c"), Some(&3));
        for i in 0..100 {
            let key = format!("k{i}");
            map.insert(key.clone(), i);
            map.remove(&key);
        }
        assert!(map.order.len() <= 4, "order grew to {}", map.order.len());
        assert_eq!(map.get("c"), Some(&3));
    }
}

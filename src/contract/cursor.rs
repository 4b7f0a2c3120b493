//! Opaque pagination cursors. A cursor is bound to one dealership and one query
//! and signed, so a caller can neither forge an offset nor replay a cursor
//! against another dealership or another search.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

const TAG_BYTES: usize = 16;

/// Signs and checks cursors with a server-side key.
pub struct CursorCodec {
    key: Vec<u8>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    /// Dealership id.
    d: String,
    /// Hash of the canonical query (filters + sort).
    q: String,
    /// Offset of the next page.
    o: u64,
}

/// Why a cursor was refused; phrased for the caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    #[error("the cursor is not one this server issued (it is malformed or was altered)")]
    Invalid,
    #[error("the cursor belongs to another dealership")]
    OtherDealership,
    #[error("the cursor belongs to a different search; repeat the search without a cursor")]
    OtherQuery,
}

/// What [`CursorCodec::page`] picks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub range: std::ops::Range<usize>,
    pub next_cursor: Option<String>,
}

impl Page {
    /// The cursor after the page's first `kept` items, when a page is cut
    /// short (by the answer's token budget): the page's own next cursor when
    /// it kept them all.
    pub fn cursor_after(
        &self,
        kept: usize,
        codec: &CursorCodec,
        dealership_id: &str,
        query_hash: &str,
    ) -> Option<String> {
        if kept < self.range.len() {
            let offset = self.range.start.saturating_add(kept) as u64;
            Some(codec.encode(dealership_id, query_hash, offset))
        } else {
            self.next_cursor.clone()
        }
    }
}

impl CursorCodec {
    pub fn new(key: &[u8]) -> Self {
        Self { key: key.to_vec() }
    }

    /// A codec with a random key (cursors then die with the process).
    pub fn random() -> Self {
        let key: Vec<u8> = (0..2)
            .flat_map(|_| *uuid::Uuid::new_v4().as_bytes())
            .collect();
        Self::new(&key)
    }

    /// Stable hash of anything serializable, to bind a cursor to a query.
    pub fn query_hash(query: &impl Serialize) -> String {
        let canonical = serde_json::to_vec(query).unwrap_or_default();
        let digest = Sha256::digest(&canonical);
        URL_SAFE_NO_PAD.encode(&digest[..12])
    }

    pub fn encode(&self, dealership_id: &str, query_hash: &str, offset: u64) -> String {
        let payload = Payload {
            d: dealership_id.to_owned(),
            q: query_hash.to_owned(),
            o: offset,
        };
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&payload).unwrap_or_default());
        let tag = URL_SAFE_NO_PAD.encode(&self.tag(body.as_bytes())[..TAG_BYTES]);
        format!("{body}.{tag}")
    }

    /// One page of an in-memory result of `total` items: the range to show and
    /// the cursor to the next page (`None` on the last). A cursor that does not
    /// decode starts at the top; validation has already refused forged ones.
    pub fn page(
        &self,
        cursor: Option<&str>,
        dealership_id: &str,
        query_hash: &str,
        limit: u32,
        total: usize,
    ) -> Page {
        let offset = cursor
            .and_then(|c| self.decode(c, dealership_id, query_hash).ok())
            .unwrap_or(0);
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(total);
        let end = start.saturating_add(limit as usize).min(total);
        let next_cursor = (end < total).then(|| self.encode(dealership_id, query_hash, end as u64));
        Page {
            range: start..end,
            next_cursor,
        }
    }

    /// The offset a cursor points at, if it is genuine and matches this dealership and query.
    pub fn decode(
        &self,
        cursor: &str,
        dealership_id: &str,
        query_hash: &str,
    ) -> Result<u64, CursorError> {
        let (body, tag) = cursor.split_once('.').ok_or(CursorError::Invalid)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| CursorError::Invalid)?;
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        mac.verify_truncated_left(&tag)
            .map_err(|_| CursorError::Invalid)?;
        if tag.len() != TAG_BYTES {
            return Err(CursorError::Invalid);
        }
        let payload: Payload = URL_SAFE_NO_PAD
            .decode(body)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or(CursorError::Invalid)?;
        if payload.d != dealership_id {
            return Err(CursorError::OtherDealership);
        }
        if payload.q != query_hash {
            return Err(CursorError::OtherQuery);
        }
        Ok(payload.o)
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC accepts keys of any length, so this cannot fail.
        <HmacSha256 as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"))
    }

    fn tag(&self, body: &[u8]) -> Vec<u8> {
        let mut mac = self.mac();
        mac.update(body);
        mac.finalize().into_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_a_result_and_stop_on_the_last() {
        let codec = CursorCodec::new(b"k");
        let first = codec.page(None, "d", "q", 4, 10);
        assert_eq!(first.range, 0..4);
        let second = codec.page(first.next_cursor.as_deref(), "d", "q", 4, 10);
        assert_eq!(second.range, 4..8);
        let last = codec.page(second.next_cursor.as_deref(), "d", "q", 4, 10);
        assert_eq!((last.range, last.next_cursor), (8..10, None));
        // A cursor for another query starts at the top; an empty result has one empty page.
        assert_eq!(
            codec
                .page(second.next_cursor.as_deref(), "d", "other", 4, 10)
                .range,
            0..4
        );
        assert_eq!(
            codec.page(None, "d", "q", 4, 0),
            Page {
                range: 0..0,
                next_cursor: None
            }
        );
    }

    #[test]
    fn round_trips_and_refuses_tampering() {
        let codec = CursorCodec::new(b"k");
        let c = codec.encode("d1", "q1", 40);
        assert_eq!(codec.decode(&c, "d1", "q1"), Ok(40));
        assert_eq!(
            codec.decode(&c, "d2", "q1"),
            Err(CursorError::OtherDealership)
        );
        assert_eq!(codec.decode(&c, "d1", "q2"), Err(CursorError::OtherQuery));
        let forged = codec.encode("d1", "q1", 0).replace('.', "x.");
        assert_eq!(codec.decode(&forged, "d1", "q1"), Err(CursorError::Invalid));
        assert_eq!(
            CursorCodec::new(b"other").decode(&c, "d1", "q1"),
            Err(CursorError::Invalid)
        );
        assert_eq!(
            codec.decode("garbage", "d1", "q1"),
            Err(CursorError::Invalid)
        );
    }
}

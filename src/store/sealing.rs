//! Customer data sealed at rest (`[store.encryption]`): AES-256-GCM per
//! value, with a random nonce and the column's name as associated data (a
//! sealed value moved to another column does not open). A sealed value reads
//! `sealed:v1:<key id>:<base64url of nonce ‖ ciphertext ‖ tag>`, so every
//! row says which key opens it and a store mid-rotation stays readable; a
//! value without the prefix is a row from before sealing, read as it is.
//!
//! Lookups that need equality (duplicate leads, erasure by e-mail or phone)
//! go through keyed hashes (HMAC-SHA-256 under a key derived from each
//! sealing key), never plaintext. A lookup tries the hash under every key
//! the bridge has, and the unkeyed SHA-256 rows from before sealing carry,
//! so it matches rows not yet resealed.
//!
//! `sealing_keys` holds, per key id ever used, a check value (an HMAC of a
//! fixed text): a process given another key under a known id, or lacking a
//! key that still seals rows, refuses to start instead of serving garbage.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};

use super::{Store, StoreError, ts};

const PREFIX: &str = "sealed:v1:";
/// `sealed_with` of a row written without keys (its hashes unkeyed).
pub const PLAIN: &str = "plain";

/// One sealing key and the keys derived from it.
struct SealKey {
    id: String,
    aead: LessSafeKey,
    index: [u8; 32],
    check: String,
}

impl SealKey {
    fn new(id: &str, master: &[u8; 32]) -> Result<Self, StoreError> {
        let derive = |label: &str| -> [u8; 32] { hmac_sha256(master, label.as_bytes()) };
        let unbound = UnboundKey::new(&AES_256_GCM, &derive("dms-bridge seal v1"))
            .map_err(|_| StoreError::Keys("cannot make an AES-256-GCM key".into()))?;
        Ok(Self {
            id: id.to_owned(),
            aead: LessSafeKey::new(unbound),
            index: derive("dms-bridge index v1"),
            check: hex::encode(derive("dms-bridge key check v1")),
        })
    }
}

/// The keys a store seals and opens customer data with. The current key
/// seals; every key opens what it sealed.
pub struct Keyring {
    current: SealKey,
    others: Vec<SealKey>,
    random: SystemRandom,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("current", &self.current.id)
            .field(
                "others",
                &self.others.iter().map(|k| &k.id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Keyring {
    /// `keys` by id (32 bytes each); `current` must be one of them.
    pub fn new(current: &str, keys: &BTreeMap<String, [u8; 32]>) -> Result<Self, StoreError> {
        let mut others = Vec::new();
        let mut chosen = None;
        for (id, master) in keys {
            let key = SealKey::new(id, master)?;
            if id == current {
                chosen = Some(key);
            } else {
                others.push(key);
            }
        }
        let current = chosen.ok_or_else(|| {
            StoreError::Keys(format!("the current key {current:?} is not among the keys"))
        })?;
        Ok(Self {
            current,
            others,
            random: SystemRandom::new(),
        })
    }

    fn all(&self) -> impl Iterator<Item = &SealKey> {
        std::iter::once(&self.current).chain(&self.others)
    }

    pub fn current_id(&self) -> &str {
        &self.current.id
    }

    pub fn ids(&self) -> Vec<String> {
        self.all().map(|k| k.id.clone()).collect()
    }

    fn seal(&self, column: &str, plain: &str) -> Result<String, StoreError> {
        let mut nonce = [0u8; NONCE_LEN];
        self.random
            .fill(&mut nonce)
            .map_err(|_| StoreError::Keys("the system's random source failed".into()))?;
        let mut sealed = plain.as_bytes().to_vec();
        self.current
            .aead
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(column.as_bytes()),
                &mut sealed,
            )
            .map_err(|_| StoreError::Keys("sealing failed".into()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(format!(
            "{PREFIX}{}:{}",
            self.current.id,
            URL_SAFE_NO_PAD.encode(out)
        ))
    }

    fn open(&self, column: &str, id: &str, body: &str) -> Result<String, StoreError> {
        let key = self.all().find(|k| k.id == id).ok_or_else(|| {
            StoreError::Keys(format!(
                "a row is sealed with key {id:?}, which is not configured"
            ))
        })?;
        let unreadable = || {
            StoreError::Keys(format!(
                "a {column} value sealed with key {id:?} does not open"
            ))
        };
        let mut bytes = URL_SAFE_NO_PAD.decode(body).map_err(|_| unreadable())?;
        if bytes.len() < NONCE_LEN {
            return Err(unreadable());
        }
        let mut sealed = bytes.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&bytes).map_err(|_| unreadable())?;
        let plain = key
            .aead
            .open_in_place(nonce, Aad::from(column.as_bytes()), &mut sealed)
            .map_err(|_| unreadable())?;
        String::from_utf8(plain.to_vec()).map_err(|_| unreadable())
    }
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let tag = ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key), message);
    let mut out = [0u8; 32];
    out.copy_from_slice(tag.as_ref());
    out
}

/// What the store seals with: a keyring, or nothing (values in the clear,
/// hashes unkeyed).
#[derive(Clone, Default, Debug)]
pub struct Sealing {
    keys: Option<Arc<Keyring>>,
}

impl Sealing {
    pub fn new(keys: Option<Keyring>) -> Self {
        Self {
            keys: keys.map(Arc::new),
        }
    }

    pub fn keyring(&self) -> Option<&Keyring> {
        self.keys.as_deref()
    }

    /// What a row written now records in `sealed_with`.
    pub fn sealed_with(&self) -> &str {
        self.keys.as_ref().map_or(PLAIN, |k| k.current_id())
    }

    /// `plain` as stored in `column` (`table.column`).
    pub fn seal(&self, column: &str, plain: &str) -> Result<String, StoreError> {
        match &self.keys {
            Some(keys) => keys.seal(column, plain),
            None => Ok(plain.to_owned()),
        }
    }

    /// A stored value of `column` as it was before sealing.
    pub fn open(&self, column: &str, stored: &str) -> Result<String, StoreError> {
        let Some(rest) = stored.strip_prefix(PREFIX) else {
            return Ok(stored.to_owned());
        };
        let (id, body) = rest.split_once(':').unwrap_or((rest, ""));
        match &self.keys {
            Some(keys) => keys.open(column, id, body),
            None => Err(StoreError::Keys(format!(
                "a {column} value is sealed with key {id:?}, and no [store.encryption] is configured"
            ))),
        }
    }

    pub fn open_opt(
        &self,
        column: &str,
        stored: Option<String>,
    ) -> Result<Option<String>, StoreError> {
        stored.map(|s| self.open(column, &s)).transpose()
    }

    /// The hash `material` is stored under now.
    pub fn index(&self, material: &str) -> String {
        match &self.keys {
            Some(keys) => hex::encode(hmac_sha256(&keys.current.index, material.as_bytes())),
            None => unkeyed(material),
        }
    }

    /// Every hash a row holding `material` may carry: under each key, and
    /// unkeyed (rows from before sealing). The current key's first.
    pub fn lookups(&self, material: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .keys
            .iter()
            .flat_map(|k| k.all())
            .map(|k| hex::encode(hmac_sha256(&k.index, material.as_bytes())))
            .collect();
        out.push(unkeyed(material));
        out
    }
}

fn unkeyed(material: &str) -> String {
    hex::encode(Sha256::digest(material.as_bytes()))
}

/// What a record's keyed hashes are made from, kept sealed beside them so
/// that a key rotation can hash again: the customer's contact points and,
/// for a lead, the material of its duplicate fingerprint.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Identity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

impl Sealing {
    /// The keyed hashes of `identity`'s e-mail and phone, under the current key.
    pub fn contact_hashes(&self, identity: &Identity) -> (Option<String>, Option<String>) {
        (
            identity
                .email
                .as_deref()
                .map(|e| self.index(&email_material(e))),
            identity
                .phone
                .as_deref()
                .map(|p| self.index(&phone_material(p))),
        )
    }

    pub fn seal_identity(&self, column: &str, identity: &Identity) -> Result<String, StoreError> {
        let json =
            serde_json::to_string(identity).map_err(|e| StoreError::Encode(e.to_string()))?;
        self.seal(column, &json)
    }

    pub fn open_identity(&self, column: &str, stored: &str) -> Result<Identity, StoreError> {
        serde_json::from_str(&self.open(column, stored)?)
            .map_err(|e| StoreError::Encode(format!("{column}: {e}")))
    }
}

/// The index material of an e-mail address: trimmed, lower case.
pub fn email_material(email: &str) -> String {
    format!("email:{}", email.trim().to_lowercase())
}

/// The index material of a phone number: its digits, without a leading
/// North American `1` (so `+1 (555) 010-2345` and `555-010-2345` match).
pub fn phone_material(phone: &str) -> String {
    let digits: String = phone.chars().filter(char::is_ascii_digit).collect();
    let national = match digits.strip_prefix('1') {
        Some(rest) if digits.len() == 11 => rest.to_owned(),
        _ => digits,
    };
    format!("phone:{national}")
}

/// A key known to the store, as `sealing_keys` has it.
#[derive(Debug, Clone)]
pub struct KnownKey {
    pub id: String,
    pub check: String,
    pub retired: bool,
}

pub async fn known_keys(store: &Store) -> Result<Vec<KnownKey>, StoreError> {
    let rows: Vec<(String, String, Option<String>)> =
        sqlx::query_as("SELECT key_id, check_value, retired_at FROM sealing_keys ORDER BY key_id")
            .fetch_all(store.pool())
            .await?;
    Ok(rows
        .into_iter()
        .map(|(id, check, retired)| KnownKey {
            id,
            check,
            retired: retired.is_some(),
        })
        .collect())
}

/// Checks `sealing` against the keys the store has seen, and records keys
/// it has not: refuses a key that differs from the one the store knows by
/// its id, and the lack of a key that still seals rows.
pub(super) async fn admit(store: &Store, sealing: &Sealing) -> Result<(), StoreError> {
    let known = known_keys(store).await?;
    let Some(keys) = sealing.keyring() else {
        let live: Vec<&str> = known
            .iter()
            .filter(|k| !k.retired)
            .map(|k| k.id.as_str())
            .collect();
        if live.is_empty() {
            return Ok(());
        }
        return Err(StoreError::Keys(format!(
            "the store holds customer data sealed with key(s) {}; configure [store.encryption] with them",
            live.join(", ")
        )));
    };
    for key in keys.all() {
        match known.iter().find(|k| k.id == key.id) {
            Some(k) if k.check != key.check => {
                return Err(StoreError::Keys(format!(
                    "key {:?} is not the key this store knows by that id: rows it sealed would not open",
                    key.id
                )));
            }
            Some(k) if k.retired && key.id == keys.current.id => {
                sqlx::query("UPDATE sealing_keys SET retired_at = NULL WHERE key_id = $1")
                    .bind(&key.id)
                    .execute(store.pool())
                    .await?;
            }
            Some(_) => {}
            None => register(store, key).await?,
        }
    }
    let ids = keys.ids();
    if let Some(missing) = known.iter().find(|k| !k.retired && !ids.contains(&k.id)) {
        return Err(StoreError::Keys(format!(
            "the store holds rows sealed with key {:?}, which [store.encryption] does not list; \
             list it again until `dms-bridge keys status` shows it retired",
            missing.id
        )));
    }
    Ok(())
}

/// Records a key the store has not seen; a process that registered the
/// same id a moment earlier with another key wins, and this one is refused.
async fn register(store: &Store, key: &SealKey) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO sealing_keys (key_id, check_value, added_at) VALUES ($1, $2, $3)
         ON CONFLICT (key_id) DO NOTHING",
    )
    .bind(&key.id)
    .bind(&key.check)
    .bind(ts(chrono::Utc::now()))
    .execute(store.pool())
    .await?;
    let check: String =
        sqlx::query_scalar("SELECT check_value FROM sealing_keys WHERE key_id = $1")
            .bind(&key.id)
            .fetch_one(store.pool())
            .await?;
    if check != key.check {
        return Err(StoreError::Keys(format!(
            "key {:?} is not the key this store knows by that id: rows it sealed would not open",
            key.id
        )));
    }
    Ok(())
}

/// Marks `id` retired: no row is sealed with it any more.
pub async fn retire(store: &Store, id: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE sealing_keys SET retired_at = $2 WHERE key_id = $1 AND retired_at IS NULL")
        .bind(id)
        .bind(ts(chrono::Utc::now()))
        .execute(store.pool())
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(current: &str, ids: &[(&str, u8)]) -> Sealing {
        let keys = ids
            .iter()
            .map(|(id, b)| ((*id).to_owned(), [*b; 32]))
            .collect();
        Sealing::new(Some(Keyring::new(current, &keys).unwrap()))
    }

    #[test]
    fn a_sealed_value_opens_with_its_key_in_its_column_only() {
        let s = ring("k1", &[("k1", 1)]);
        let sealed = s
            .seal("leads.request", "{\"email\":\"jane@example.com\"}")
            .unwrap();
        assert!(sealed.starts_with("sealed:v1:k1:"));
        assert!(!sealed.contains("jane"));
        assert_ne!(
            sealed,
            s.seal("leads.request", "{\"email\":\"jane@example.com\"}")
                .unwrap()
        );
        assert_eq!(
            s.open("leads.request", &sealed).unwrap(),
            "{\"email\":\"jane@example.com\"}"
        );
        assert!(s.open("lead_deliveries.document", &sealed).is_err());
        let wrong = ring("k1", &[("k1", 2)]);
        assert!(wrong.open("leads.request", &sealed).is_err());
        assert!(Sealing::default().open("leads.request", &sealed).is_err());
        // Rows from before sealing read as they are.
        assert_eq!(s.open("leads.request", "{}").unwrap(), "{}");
    }

    #[test]
    fn after_rotation_old_rows_open_and_lookups_match_every_key() {
        let old = ring("k1", &[("k1", 1)]);
        let rotated = ring("k2", &[("k1", 1), ("k2", 2)]);
        let sealed = old.seal("c", "x").unwrap();
        assert_eq!(rotated.open("c", &sealed).unwrap(), "x");
        assert!(rotated.seal("c", "x").unwrap().starts_with("sealed:v1:k2:"));
        let m = email_material(" Jane@Example.com ");
        assert!(rotated.lookups(&m).contains(&old.index(&m)));
        assert!(rotated.lookups(&m).contains(&Sealing::default().index(&m)));
        assert_eq!(rotated.lookups(&m)[0], rotated.index(&m));
        assert_ne!(old.index(&m), Sealing::default().index(&m));
    }

    #[test]
    fn phone_numbers_match_however_written() {
        assert_eq!(
            phone_material("+1 (555) 010-2345"),
            phone_material("555.010.2345")
        );
        assert_ne!(
            phone_material("+44 20 7946 0958"),
            phone_material("20 7946 0958")
        );
    }
}

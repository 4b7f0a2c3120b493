//! `[store.encryption]` read into the store's keyring (the I/O half: keys
//! from files and the environment), and opening the store with it.

use std::collections::BTreeMap;
use std::path::Path;

use secrecy::ExposeSecret;

use crate::config::{Config, ConfigError, ConfigErrors, key_bytes, resolve_secret};
use crate::store::sealing::{Keyring, Sealing};
use crate::store::{Store, StoreError};

/// The keyring `[store.encryption]` names, or none (data in the clear).
pub fn sealing(config: &Config, base: &Path, errors: &mut Vec<ConfigError>) -> Sealing {
    let Some(e) = &config.store.encryption else {
        return Sealing::default();
    };
    let mut keys = BTreeMap::new();
    for (id, source) in &e.keys {
        let path = format!("store.encryption.keys.{id}");
        match resolve_secret(source, base).and_then(|k| key_bytes(k.expose_secret())) {
            Ok(bytes) => {
                keys.insert(id.clone(), bytes);
            }
            Err(problem) => errors.push(ConfigError::new(path, problem)),
        }
    }
    if keys.len() != e.keys.len() {
        return Sealing::default();
    }
    match Keyring::new(&e.current, &keys) {
        Ok(ring) => Sealing::new(Some(ring)),
        Err(problem) => {
            errors.push(ConfigError::new("store.encryption", problem.to_string()));
            Sealing::default()
        }
    }
}

/// The store of `config`, its keys checked against the data it holds: what
/// the operator's commands (`erase`, `audit`, `keys`, `leads retry`) open.
pub async fn open_store(config: &Config, base: &Path) -> anyhow::Result<Store> {
    let mut errors = Vec::new();
    let sealing = sealing(config, base, &mut errors);
    if !errors.is_empty() {
        anyhow::bail!("{}", ConfigErrors(errors));
    }
    Ok(open_sealed(&config.store.url, sealing).await?)
}

/// Opens the store at `url` and admits `sealing` to it.
pub async fn open_sealed(url: &str, sealing: Sealing) -> Result<Store, StoreError> {
    let store = Store::open(url).await?.sealed(sealing).await?;
    if store.sealing().keyring().is_none() {
        tracing::warn!(
            "Customer data is stored in the clear: set [store.encryption] to seal it (docs/operations/data-lifecycle.md)."
        );
    }
    Ok(store)
}

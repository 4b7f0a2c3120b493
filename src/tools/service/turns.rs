//! Calls that share an idempotency key take turns, so a retry sent while the
//! first call is still waiting on the scheduler replays its answer instead of
//! booking a second time. The store is one process's SQLite file, so an
//! in-process lock covers every writer.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use tokio::sync::OwnedMutexGuard;

type Locks = Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>;

static LOCKS: LazyLock<Locks> = LazyLock::new(Locks::default);

/// The turn of one key; the next caller with the key proceeds when it drops.
pub struct KeyTurn {
    key: String,
    lock: Arc<tokio::sync::Mutex<()>>,
    _guard: OwnedMutexGuard<()>,
}

/// Waits for the turn of `key`.
pub async fn take(key: String) -> KeyTurn {
    let lock = {
        let mut locks = LOCKS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        locks.entry(key.clone()).or_default().clone()
    };
    let guard = lock.clone().lock_owned().await;
    KeyTurn {
        key,
        lock,
        _guard: guard,
    }
}

impl Drop for KeyTurn {
    fn drop(&mut self) {
        let mut locks = LOCKS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // The map, this turn and its guard: nobody else waits, so forget the key.
        if Arc::strong_count(&self.lock) <= 3 {
            locks.remove(&self.key);
        }
    }
}

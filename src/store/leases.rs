//! Work one process does for every process on the store (`migrations/*/0012`):
//! a dealership's mirror reads, its repair-order watch, a webhook endpoint's
//! deliveries, the event purge. Each such job has a name; the process holding
//! the name's lease does the job. One statement per round takes or renews
//! every name a process asks for, so the cost is one query per process every
//! [`RENEW_EVERY`], whatever the number of dealerships.
//!
//! A process that dies stops renewing; its names pass to another process
//! within [`LEASE_FOR`] plus one round. Leases compare times from each
//! process's clock: replicas must keep their clocks in step (NTP), and a skew
//! below [`LEASE_FOR`] minus [`RENEW_EVERY`] cannot let two hold one name.
//! SQLite serves one node: there every name is held by this process, with no
//! query.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use tokio_util::sync::CancellationToken;

use super::ts;
use super::{Store, StoreDialect, StoreError};

/// How long a taken or renewed lease lasts.
pub const LEASE_FOR: Duration = Duration::from_secs(15);
/// How often a process renews what it holds and tries to take the rest.
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

/// The leases this process asks for. Cheap to clone.
#[derive(Clone)]
pub struct Leases {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    names: Mutex<BTreeMap<String, Arc<AtomicBool>>>,
}

/// One named job's lease, as this process last saw it.
#[derive(Clone)]
pub struct Lease {
    held: Arc<AtomicBool>,
}

impl Lease {
    /// True while this process should do the job.
    pub fn is_held(&self) -> bool {
        self.held.load(Ordering::Acquire)
    }

    /// A lease held for good (one process alone does the job).
    pub fn always() -> Self {
        Self {
            held: Arc::new(AtomicBool::new(true)),
        }
    }
}

impl Leases {
    pub fn new(store: &Store) -> Self {
        Self {
            inner: Arc::new(Inner {
                store: store.clone(),
                names: Mutex::default(),
            }),
        }
    }

    /// The lease on `name`, taken now if it is free (always on SQLite) and
    /// kept by the rounds from then on.
    pub async fn take(&self, name: &str) -> Lease {
        let single = self.inner.store.dialect() == StoreDialect::Sqlite;
        let held = self
            .names()
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new(AtomicBool::new(single)))
            .clone();
        if !single {
            let now = Utc::now();
            let until = now + chrono::Duration::from_std(LEASE_FOR).unwrap_or_default();
            let taken = hold(&self.inner.store, &[name.to_owned()], now, until).await;
            held.store(taken.is_ok_and(|t| !t.is_empty()), Ordering::Release);
        }
        Lease { held }
    }

    /// Renews every [`RENEW_EVERY`] until `cancel`, then gives up what it
    /// holds so that others take over at once.
    pub fn start(&self, cancel: CancellationToken) {
        if self.inner.store.dialect() == StoreDialect::Sqlite {
            return;
        }
        let leases = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = cancel.cancelled() => break,
                    () = tokio::time::sleep(RENEW_EVERY) => leases.round().await,
                }
            }
            leases.give_up().await;
        });
    }

    /// One round: hold what can be held; on a store failure hold nothing
    /// (another process may take over while this one cannot renew).
    async fn round(&self) {
        let wanted: Vec<String> = self.names().keys().cloned().collect();
        if wanted.is_empty() {
            return;
        }
        let now = Utc::now();
        let until = now + chrono::Duration::from_std(LEASE_FOR).unwrap_or_default();
        let held = hold(&self.inner.store, &wanted, now, until)
            .await
            .inspect_err(
                |e| tracing::warn!(error = %e, "Cannot renew work leases; pausing that work here."),
            )
            .unwrap_or_default();
        for (name, flag) in self.names().iter() {
            let now_held = held.contains(name);
            if flag.swap(now_held, Ordering::AcqRel) != now_held {
                tracing::info!(lease = %name, held = now_held, "Work lease changed hands.");
            }
        }
    }

    async fn give_up(&self) {
        let store = &self.inner.store;
        let released = sqlx::query("DELETE FROM work_leases WHERE holder = $1")
            .bind(store.process_id())
            .execute(store.pool())
            .await;
        if let Err(e) = released {
            tracing::warn!(error = %e, "Cannot release work leases; they run out by themselves.");
        }
        for flag in self.names().values() {
            flag.store(false, Ordering::Release);
        }
    }

    fn names(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<AtomicBool>>> {
        self.inner.names.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Takes every name in `names` that is free, expired or already this
/// process's, until `until`, in one statement; returns the names now held.
async fn hold(
    store: &Store,
    names: &[String],
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    // $1–$3 are the holder and the times; the names are bound from $4 on.
    let rows = (4..4 + names.len())
        .map(|n| format!("(${n}, $1, $2)"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "INSERT INTO work_leases (name, holder, lease_until) VALUES {rows}
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
         WHERE work_leases.holder = excluded.holder OR work_leases.lease_until <= $3
         RETURNING name"
    );
    let mut query = sqlx::query_scalar::<_, String>(AssertSqlSafe(sql))
        .bind(store.process_id())
        .bind(ts(until))
        .bind(ts(now));
    for name in names {
        query = query.bind(name);
    }
    Ok(query.fetch_all(store.pool()).await?)
}

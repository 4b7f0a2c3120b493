//! Durable state through sqlx's `Any` driver: SQLite (embedded, zero set-up,
//! one node) or PostgreSQL (a server several processes can share). One set
//! of functions serves both: statements use numbered placeholders (`$1`),
//! which PostgreSQL takes natively and sqlx-sqlite maps to the N-th argument,
//! and values are the types `Any` carries (integers, text; times as
//! fixed-width RFC 3339 text). Each dialect has its own migrations
//! (`migrations/sqlite`, `migrations/postgres`, same versions), run at start.

mod audit;
pub mod audit_trail;
pub mod bookings;
pub mod crm_statuses;
pub mod deliveries;
pub mod erasure;
pub mod events;
pub mod idempotency;
pub mod inbound;
pub mod keys;
pub mod leads;
pub mod leases;
pub mod migrations;
pub mod mirror;
pub mod operator;
pub mod repair_orders;
pub mod reseal;
pub mod retention;
pub mod sealing;
pub mod signals;
pub mod subscriptions;
pub mod tasks;
pub mod webhooks;

use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{Any, AnyPool, Transaction};

pub use crate::config::StoreDialect;
pub use audit::{AuditRecord, AuditWriter, argument_shape};
pub use signals::Signal;

use signals::Signals;

/// Why the store could not be opened or used. Messages name what failed,
/// never the URL (it may carry a password).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the store URL is neither sqlite: nor postgres(ql)://")]
    Url,
    #[error("cannot open the store: {0}")]
    Open(#[source] sqlx::Error),
    #[error("cannot migrate the store: {0}")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    #[error("cannot encode a record for the store: {0}")]
    Encode(String),
    #[error("store query failed: {0}")]
    Query(#[from] sqlx::Error),
    /// The keys do not fit the store's sealed customer data.
    #[error("{0}")]
    Keys(String),
}

/// Connections one process keeps to PostgreSQL: the outbox, the audit writer,
/// the webhook deliverers and concurrent tool calls each hold one briefly.
const POSTGRES_CONNECTIONS: u32 = 8;

/// A handle to the database. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    dialect: StoreDialect,
    writes: Arc<tokio::sync::Mutex<()>>,
    signals: Arc<Signals>,
    sealing: sealing::Sealing,
}

/// A write transaction, holding this process's write turn where the dialect
/// needs one (SQLite). Commit `tx`; the turn ends when this is dropped.
pub(crate) struct Write<'s> {
    pub tx: Transaction<'static, Any>,
    _turn: WriteTurn<'s>,
}

/// This process's turn to write (SQLite), or nothing (PostgreSQL).
pub struct WriteTurn<'s> {
    _guard: Option<tokio::sync::MutexGuard<'s, ()>>,
}

impl Store {
    /// Opens (creating a SQLite file if needed) and migrates the store at `url`.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let dialect = StoreDialect::of_url(url).ok_or(StoreError::Url)?;
        sqlx::any::install_default_drivers();
        let pool = match dialect {
            StoreDialect::Sqlite => open_sqlite(url).await?,
            StoreDialect::Postgres => open_postgres(url).await?,
        };
        migrations::migrator(dialect)
            .run(&pool)
            .await
            .map_err(StoreError::Migrate)?;
        let signals = Signals::new();
        if dialect == StoreDialect::Postgres {
            signals::spawn_listener(url.to_owned(), Arc::downgrade(&signals));
        }
        Ok(Self {
            pool,
            dialect,
            writes: Arc::default(),
            signals,
            sealing: sealing::Sealing::default(),
        })
    }

    /// This store, sealing customer data with `sealing` from now on, once
    /// the store has confirmed the keys (see [`sealing::admit`]): a key the
    /// store knows differently, or the lack of one that still seals rows, is
    /// refused with what to do.
    pub async fn sealed(mut self, sealing: sealing::Sealing) -> Result<Self, StoreError> {
        sealing::admit(&self, &sealing).await?;
        self.sealing = sealing;
        Ok(self)
    }

    pub fn sealing(&self) -> &sealing::Sealing {
        &self.sealing
    }

    pub fn dialect(&self) -> StoreDialect {
        self.dialect
    }

    /// This process's turn to write. SQLite has one writer at a time; waiting
    /// here wakes the next writer the moment the previous one commits, where
    /// SQLite's busy handler would sleep in fixed steps while the lock sits free
    /// (that sleeping capped lead intake at ~1,400/s with a long tail).
    /// PostgreSQL takes row locks instead, so writers there never wait here.
    pub async fn write_turn(&self) -> WriteTurn<'_> {
        let guard = match self.dialect {
            StoreDialect::Sqlite => Some(self.writes.lock().await),
            StoreDialect::Postgres => None,
        };
        WriteTurn { _guard: guard }
    }

    /// Begins a write transaction. SQLite's `BEGIN IMMEDIATE` takes the write
    /// lock first, so every read in it sees what the write will change;
    /// PostgreSQL's writers order themselves on the rows they lock (and on
    /// [`Self::lock`] where a read decides what to write).
    pub(crate) async fn write(&self) -> Result<Write<'_>, StoreError> {
        let turn = self.write_turn().await;
        let tx = match self.dialect {
            StoreDialect::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            StoreDialect::Postgres => self.pool.begin().await?,
        };
        Ok(Write { tx, _turn: turn })
    }

    /// Serialises the transactions of `tx` that name the same `key` until
    /// they end, across every process on the store: for a read that decides
    /// a write (is this lead a duplicate, did this status change). SQLite's
    /// write transactions are serial already.
    pub(crate) async fn lock(
        &self,
        tx: &mut Transaction<'static, Any>,
        key: &str,
    ) -> Result<(), StoreError> {
        if self.dialect == StoreDialect::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(lock_id(key))
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }

    /// Signalled after every commit that appended events, in this process or
    /// (on PostgreSQL) another: what event readers wait on between polls.
    pub fn events_appended(&self) -> &tokio::sync::Notify {
        &self.signals.events_appended
    }

    /// Every signal from now on, from this process and the others on the store.
    pub fn signals(&self) -> tokio::sync::broadcast::Receiver<Signal> {
        self.signals.subscribe()
    }

    /// Names this process among those sharing the store (random per start).
    pub fn process_id(&self) -> &str {
        &self.signals.origin
    }

    /// Tells this process and every other on the store. A signal that cannot
    /// be sent is logged: receivers poll, so it is late, not lost.
    pub async fn announce(&self, signal: Signal) {
        if self.dialect == StoreDialect::Postgres
            && let Some(payload) = self.signals.payload(&signal)
        {
            let sent = sqlx::query(signals::NOTIFY_SQL)
                .bind(signals::channel())
                .bind(payload)
                .execute(&self.pool)
                .await;
            if let Err(e) = sent {
                tracing::warn!(error = %e, "Cannot signal the other processes on the store.");
            }
        }
        self.signals.deliver(signal);
    }

    /// After a commit that appended events to `dealership`'s log.
    pub(crate) async fn announce_events(&self, dealership: &str) {
        self.announce(Signal::Events {
            dealership: dealership.to_owned(),
        })
        .await;
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// For `/readyz`: the store answers a query.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}

/// SQLite in WAL mode with `synchronous = NORMAL` (durable at each
/// checkpoint, never corrupt). The URL is all `Any` passes on, so the file's
/// creation is asked for there (`mode=rwc`) and the journal settings are set
/// on each new connection.
async fn open_sqlite(url: &str) -> Result<AnyPool, StoreError> {
    let memory = url.contains(":memory:");
    let url = if memory || url.contains("mode=") {
        url.to_owned()
    } else {
        let join = if url.contains('?') { '&' } else { '?' };
        format!("{url}{join}mode=rwc")
    };
    let options: AnyConnectOptions = url.parse().map_err(StoreError::Open)?;
    let journal = if memory {
        "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = NORMAL"
    } else {
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL"
    };
    // Every connection to ":memory:" is its own database: keep exactly one.
    AnyPoolOptions::new()
        .max_connections(if memory { 1 } else { 4 })
        .min_connections(if memory { 1 } else { 0 })
        .idle_timeout(None)
        .max_lifetime(None)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                sqlx::raw_sql(journal).execute(conn).await?;
                Ok(())
            })
        })
        .connect_with(options)
        .await
        .map_err(StoreError::Open)
}

/// A small pool: PostgreSQL serves every replica from one connection limit.
async fn open_postgres(url: &str) -> Result<AnyPool, StoreError> {
    let options: AnyConnectOptions = url.parse().map_err(StoreError::Open)?;
    AnyPoolOptions::new()
        .max_connections(POSTGRES_CONNECTIONS)
        .idle_timeout(Duration::from_secs(300))
        .connect_with(options)
        .await
        .map_err(StoreError::Open)
}

/// A 64-bit advisory lock id for `key`, the same in every process.
fn lock_id(key: &str) -> i64 {
    let digest = Sha256::digest(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first)
}

/// Fixed-width UTC text, so times compare as strings.
pub fn ts(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// `count` numbered placeholders from `$first`, comma-separated: for IN
/// lists and multi-row VALUES, which both dialects take in this form.
pub(crate) fn placeholders(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `IN` a list bound as one parameter, `$n`, holding the list as a JSON array
/// of strings ([`json_list`]). Long lists (one customer's leads for an
/// erasure, a purge batch) would otherwise be one numbered placeholder per
/// item, which SQLite binds in time quadratic in their number (see
/// [`value_rows`]).
pub(crate) fn in_list(dialect: StoreDialect, n: usize) -> String {
    match dialect {
        StoreDialect::Sqlite => format!("IN (SELECT value FROM json_each(${n}))"),
        StoreDialect::Postgres => format!("IN (SELECT jsonb_array_elements_text(${n}::jsonb))"),
    }
}

/// `items` as the JSON array an [`in_list`] parameter takes.
pub(crate) fn json_list<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    serde_json::to_string(&items).unwrap_or_else(|_| "[]".to_owned())
}

/// `rows` parenthesised groups of `columns` placeholders, for a multi-row
/// `VALUES` that binds nothing else: `($1, $2), ($3, $4)` for PostgreSQL,
/// `(?, ?), (?, ?)` for SQLite.
///
/// SQLite gets anonymous ones because sqlx asks SQLite each parameter's name
/// as it binds, and SQLite finds a name by walking the statement's list of
/// names: with numbered placeholders a statement of n parameters costs n²/2
/// steps. A full audit batch (256 rows × 11) spent 15 % of a loaded bridge's
/// CPU in `sqlite3_bind_parameter_name` (BENCHMARKS.md, "The AAP door").
/// Anonymous parameters have no names, and bind in order.
pub(crate) fn value_rows(dialect: StoreDialect, rows: usize, columns: usize) -> String {
    let row = |first: usize| match dialect {
        StoreDialect::Postgres => placeholders(first, columns),
        StoreDialect::Sqlite => vec!["?"; columns].join(", "),
    };
    (0..rows)
        .map(|r| format!("({})", row(r * columns + 1)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_from_the_first() {
        assert_eq!(placeholders(3, 3), "$3, $4, $5");
        assert_eq!(placeholders(1, 0), "");
        assert_eq!(
            value_rows(StoreDialect::Postgres, 2, 2),
            "($1, $2), ($3, $4)"
        );
        assert_eq!(value_rows(StoreDialect::Sqlite, 2, 2), "(?, ?), (?, ?)");
    }

    #[tokio::test]
    async fn a_json_list_parameter_matches_each_item_and_nothing_else() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let list = json_list(&["a", "b\"c", "d'e"]);
        assert_eq!(list, r#"["a","b\"c","d'e"]"#);
        for (item, found) in [("a", 1), ("b\"c", 1), ("d'e", 1), ("b", 0)] {
            let sql = format!(
                "SELECT COUNT(*) FROM (SELECT $2 AS v) t WHERE v {}",
                in_list(StoreDialect::Sqlite, 1)
            );
            let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(list.as_str())
                .bind(item)
                .fetch_one(store.pool())
                .await
                .unwrap();
            assert_eq!(n, found, "{item}");
        }
    }

    #[test]
    fn lock_ids_are_stable_and_distinct() {
        assert_eq!(lock_id("a"), lock_id("a"));
        assert_ne!(lock_id("a"), lock_id("b"));
    }
}

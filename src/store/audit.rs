//! One audit record per tool call. The pipeline hands records to a channel;
//! a background task writes them in batches, so the hot path never waits on
//! the disk unless the writer falls a whole channel behind.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;
use sqlx::AssertSqlSafe;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Store;
use crate::telemetry::door::Door;
use crate::telemetry::metrics::Metrics;

const CHANNEL: usize = 8192;
const BATCH: usize = 256;
/// Values per audit row.
const COLUMNS: usize = 11;
/// How long the writer waits for a batch to fill once its first record is in.
/// Under load this turns hundreds of small commits a second (each a WAL
/// append, each a new statement of its own length) into a few full ones; a
/// quiet bridge writes a lone record this much later.
const LINGER: Duration = Duration::from_millis(25);

/// One audit row: written by the pipeline (and the front door's refusals),
/// read back by `dms-bridge audit`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AuditRecord {
    pub at: DateTime<Utc>,
    pub trace_id: String,
    /// The door the call came in by; for a refusal, the door it was refused
    /// at (`None` on routes that are no agent's door, and on older rows).
    pub door: Option<Door>,
    pub principal: String,
    pub dealership: Option<String>,
    pub tool: String,
    pub adapter: Option<String>,
    pub outcome: String,
    pub latency_us: u64,
    pub cache_hit: bool,
    /// Key paths of the arguments, never their values.
    pub arg_shape: Vec<String>,
}

/// Sends records to the writer task.
#[derive(Clone)]
pub struct AuditWriter {
    sender: mpsc::Sender<AuditRecord>,
    metrics: Arc<Metrics>,
}

impl AuditWriter {
    /// Starts the writer task; it drains what is queued when `cancel` fires.
    pub fn start(
        store: Store,
        metrics: Arc<Metrics>,
        cancel: CancellationToken,
    ) -> (Self, tokio::task::JoinHandle<()>) {
        let (sender, receiver) = mpsc::channel(CHANNEL);
        let task = tokio::spawn(write_loop(store, receiver, metrics.clone(), cancel));
        (Self { sender, metrics }, task)
    }

    /// Queues a record; waits only when the writer is a full channel behind.
    pub async fn record(&self, record: AuditRecord) {
        if self.sender.send(record).await.is_err() {
            self.metrics.audit_dropped.inc();
        }
    }
}

async fn write_loop(
    store: Store,
    mut receiver: mpsc::Receiver<AuditRecord>,
    metrics: Arc<Metrics>,
    cancel: CancellationToken,
) {
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        let open = tokio::select! {
            n = receiver.recv_many(&mut batch, BATCH) => n > 0 && fill(&mut receiver, &mut batch).await,
            _ = cancel.cancelled() => {
                receiver.close();
                while receiver.recv_many(&mut batch, BATCH).await > 0 {
                    flush(&store, &mut batch, &metrics).await;
                }
                false
            }
        };
        flush(&store, &mut batch, &metrics).await;
        if !open {
            break;
        }
    }
}

/// Adds records to `batch` until it is full or [`LINGER`] has passed.
/// Returns false once the channel is closed and empty.
async fn fill(receiver: &mut mpsc::Receiver<AuditRecord>, batch: &mut Vec<AuditRecord>) -> bool {
    let deadline = tokio::time::Instant::now() + LINGER;
    while batch.len() < BATCH {
        let room = BATCH - batch.len();
        match tokio::time::timeout_at(deadline, receiver.recv_many(batch, room)).await {
            Ok(0) => return false,
            Ok(_) => {}
            Err(_elapsed) => break,
        }
    }
    true
}

async fn flush(store: &Store, batch: &mut Vec<AuditRecord>, metrics: &Metrics) {
    if batch.is_empty() {
        return;
    }
    for attempt in 0..3 {
        match insert(store, batch).await {
            Ok(()) => {
                batch.clear();
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, attempt, records = batch.len(), "Could not write audit records.");
                tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
            }
        }
    }
    metrics.audit_dropped.inc_by(batch.len() as u64);
    tracing::error!(
        records = batch.len(),
        "Dropped audit records after retries."
    );
    batch.clear();
}

/// One multi-row INSERT (256 rows × 11 values stays far below SQLite's and
/// PostgreSQL's bound parameter limits). A single statement, not a `BEGIN … COMMIT` around one
/// statement per row: with the explicit transaction, a connection of the
/// running bridge sometimes kept SQLite's write lock after the batch, and a
/// second process (`dms-bridge leads retry`) then timed out on it.
async fn insert(store: &Store, batch: &[AuditRecord]) -> Result<(), sqlx::Error> {
    let _turn = store.write_turn().await;
    // Only numbered placeholders are spliced in; every value is bound.
    let sql = format!(
        "INSERT INTO audit_log (at, trace_id, door, principal, dealership, tool, adapter, outcome, latency_us, cache_hit, arg_shape) VALUES {}",
        super::value_rows(store.dialect(), batch.len(), COLUMNS)
    );
    let mut query = sqlx::query(AssertSqlSafe(sql));
    for r in batch {
        query = query
            .bind(r.at.to_rfc3339_opts(SecondsFormat::Micros, true))
            .bind(r.trace_id.as_str())
            .bind(r.door.map(Door::as_str))
            .bind(r.principal.as_str())
            .bind(r.dealership.as_deref())
            .bind(r.tool.as_str())
            .bind(r.adapter.as_deref())
            .bind(r.outcome.as_str())
            .bind(r.latency_us as i64)
            .bind(i64::from(r.cache_hit))
            .bind(serde_json::to_string(&r.arg_shape).unwrap_or_default());
    }
    // Only the full-batch statement is kept prepared. Every other length is a
    // statement of its own; caching them all (sqlx keeps 100 per connection)
    // held tens of megabytes of SQLite programs after a burst.
    let keep_prepared = batch.len() == BATCH;
    query
        .persistent(keep_prepared)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// Key paths of a JSON value, e.g. `["dealership_id", "filters.make", "limit"]`.
/// Values are never included.
pub fn argument_shape(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out
}

fn walk(value: &Value, prefix: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                match inner {
                    Value::Object(m) if !m.is_empty() => walk(inner, path, out),
                    _ => out.push(path),
                }
            }
        }
        _ if !prefix.is_empty() => out.push(prefix),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n: usize) -> AuditRecord {
        AuditRecord {
            at: Utc::now(),
            trace_id: format!("{n:032x}"),
            door: Some(Door::Mcp),
            principal: "p".into(),
            dealership: Some("d".into()),
            tool: "inventory.search".into(),
            adapter: None,
            outcome: "ok".into(),
            latency_us: 1,
            cache_hit: false,
            arg_shape: vec!["dealership_id".into()],
        }
    }

    async fn rows(store: &Store) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM audit_log")
            .fetch_one(store.pool())
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn bursts_fill_batches_a_lone_record_is_written_soon_and_shutdown_drains() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let cancel = CancellationToken::new();
        let (writer, task) = AuditWriter::start(store.clone(), Metrics::new(), cancel.clone());

        // Two full batches and a part of one, queued faster than they are written.
        for n in 0..(2 * BATCH + 7) {
            writer.record(record(n)).await;
        }
        // A lone record is written too, without waiting for more or for a shutdown.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while rows(&store).await < (2 * BATCH + 7) as i64 {
            assert!(tokio::time::Instant::now() < deadline, "burst not written");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        writer.record(record(9_999)).await;
        while rows(&store).await < (2 * BATCH + 8) as i64 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "lone record not written"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }

        // What is queued when the cancel fires is still written.
        for n in 0..5 {
            writer.record(record(20_000 + n)).await;
        }
        cancel.cancel();
        task.await.unwrap();
        assert_eq!(rows(&store).await, (2 * BATCH + 13) as i64);
    }

    /// Every value of a full batch lands in its own row and column, in both
    /// placeholder forms (SQLite binds anonymous ones in order).
    async fn a_full_batch_reads_back_as_written(store: Store) {
        let base = DateTime::parse_from_rfc3339("2026-11-28T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let written: Vec<AuditRecord> = (0..BATCH)
            .map(|n| AuditRecord {
                at: base + chrono::Duration::microseconds(n as i64),
                trace_id: format!("{n:032x}"),
                door: [None, Some(Door::Mcp), Some(Door::Aap)][n % 3],
                principal: format!("p{n}"),
                dealership: (n % 2 == 0).then(|| format!("d{n}")),
                tool: format!("tool{n}"),
                adapter: (n % 5 == 0).then(|| format!("a{n}")),
                outcome: format!("o{n}"),
                latency_us: n as u64 * 7,
                cache_hit: n % 4 == 0,
                arg_shape: vec![format!("k{n}")],
            })
            .collect();
        insert(&store, &written).await.unwrap();
        let filter = super::super::audit_trail::AuditFilter {
            limit: BATCH as u32 * 2,
            ..Default::default()
        };
        let read = super::super::audit_trail::read(&store, &filter)
            .await
            .unwrap();
        let json = |r: &[AuditRecord]| serde_json::to_value(r).unwrap();
        assert_eq!(json(&read), json(&written));
    }

    #[tokio::test]
    async fn a_full_batch_reads_back_as_written_on_sqlite() {
        a_full_batch_reads_back_as_written(Store::open("sqlite::memory:").await.unwrap()).await;
    }

    #[test]
    fn shape_has_keys_and_no_values() {
        let shape = argument_shape(&serde_json::json!({
            "dealership_id": "d", "filters": { "make": ["Dana"], "price_max": { "amount": 1, "currency": "USD" } }, "limit": 5
        }));
        assert_eq!(
            shape,
            [
                "dealership_id",
                "filters.make",
                "filters.price_max.amount",
                "filters.price_max.currency",
                "limit"
            ]
        );
        assert!(!format!("{shape:?}").contains("Dana"));
    }
}

//! SQL for the event log (`migrations/*/0008`). Events are appended inside the
//! transaction that records the change they describe (a lead, a booking, a
//! sync's mirror update), so a change and its event commit together or not
//! at all. Sequences come from `event_heads` in that same transaction: one
//! writer per dealership at a time (SQLite's one writer; on PostgreSQL the
//! `event_heads` upsert locks the dealership's row until commit), so sequence
//! order is commit order and a rolled-back transaction leaves no gap.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::ts;
use super::{Store, StoreError};
use crate::model::event::{Event, EventResource, EventType, NewEvent, ResourceKind};

/// Version of a stored event's shape; bump it with a migration of old rows.
pub const EVENT_SCHEMA_VERSION: i64 = 1;

/// A stored event and the principal whose record it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    pub event: Event,
    pub owner: Option<String>,
}

/// Appends `events` for `dealership` in its own transaction.
pub async fn append(
    store: &Store,
    dealership: &str,
    events: &[NewEvent],
    observed_at: DateTime<Utc>,
) -> Result<Vec<u64>, StoreError> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let mut write = store.write().await?;
    let sequences = append_in(&mut write.tx, dealership, events, observed_at).await?;
    write.tx.commit().await?;
    store.announce_events(dealership).await;
    Ok(sequences)
}

/// Appends `events` inside `tx`; their sequences follow the dealership's last.
pub(super) async fn append_in(
    tx: &mut Transaction<'static, Any>,
    dealership: &str,
    events: &[NewEvent],
    observed_at: DateTime<Utc>,
) -> Result<Vec<u64>, StoreError> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let count = i64::try_from(events.len()).unwrap_or(i64::MAX);
    let last: i64 = sqlx::query_scalar(
        "INSERT INTO event_heads (dealership, last_sequence) VALUES ($1, $2)
         ON CONFLICT (dealership) DO UPDATE SET last_sequence = event_heads.last_sequence + $2
         RETURNING last_sequence",
    )
    .bind(dealership)
    .bind(count)
    .fetch_one(&mut **tx)
    .await?;
    let first = last - count + 1;
    let observed = ts(observed_at);
    let mut sequences = Vec::with_capacity(events.len());
    for (offset, event) in (0..).zip(events) {
        let sequence = first + offset;
        sqlx::query(
            "INSERT INTO events (dealership, sequence, schema_version, event_type, resource_kind,
                 resource_id, owner, occurred_at, observed_at, data)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(dealership)
        .bind(sequence)
        .bind(EVENT_SCHEMA_VERSION)
        .bind(event.event_type.as_str())
        .bind(event.event_type.resource_kind().as_str())
        .bind(&event.resource_id)
        .bind(&event.owner)
        .bind(ts(event.occurred_at))
        .bind(&observed)
        .bind(event.data.to_string())
        .execute(&mut **tx)
        .await?;
        sequences.push(u64::try_from(sequence).unwrap_or_default());
    }
    Ok(sequences)
}

/// Up to `limit` events of `dealership` after `after`, in sequence order.
pub async fn after(
    store: &Store,
    dealership: &str,
    after: u64,
    limit: u32,
) -> Result<Vec<StoredEvent>, StoreError> {
    let rows = sqlx::query(
        "SELECT dealership, sequence, schema_version, event_type, resource_id, owner,
             occurred_at, observed_at, data
         FROM events WHERE dealership = $1 AND sequence > $2
         ORDER BY sequence LIMIT $3",
    )
    .bind(dealership)
    .bind(i64::try_from(after).unwrap_or(i64::MAX))
    .bind(i64::from(limit))
    .fetch_all(store.pool())
    .await?;
    rows.iter().filter_map(read_row).collect()
}

/// The last sequence given out for `dealership` (0 before its first event).
pub async fn head(store: &Store, dealership: &str) -> Result<u64, StoreError> {
    let last: Option<i64> =
        sqlx::query_scalar("SELECT last_sequence FROM event_heads WHERE dealership = $1")
            .bind(dealership)
            .fetch_optional(store.pool())
            .await?;
    Ok(last.and_then(|l| u64::try_from(l).ok()).unwrap_or(0))
}

/// Deletes events observed before `cutoff`, but none of `dealership` past
/// `keep_after` (what a webhook endpoint has yet to deliver). Returns how many went.
pub async fn purge(
    store: &Store,
    dealership: &str,
    cutoff: DateTime<Utc>,
    keep_after: u64,
) -> Result<u64, StoreError> {
    let _turn = store.write_turn().await;
    let done = sqlx::query(
        "DELETE FROM events WHERE dealership = $1 AND observed_at < $2 AND sequence <= $3",
    )
    .bind(dealership)
    .bind(ts(cutoff))
    .bind(i64::try_from(keep_after).unwrap_or(i64::MAX))
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected())
}

/// A row as an event; rows of an unknown schema version or type are skipped
/// with a log line rather than failing every read after them.
fn read_row(row: &AnyRow) -> Option<Result<StoredEvent, StoreError>> {
    let parsed = (|| -> Result<Option<StoredEvent>, StoreError> {
        let version: i64 = row.try_get("schema_version")?;
        let type_text: String = row.try_get("event_type")?;
        let (Some(event_type), EVENT_SCHEMA_VERSION) = (EventType::parse(&type_text), version)
        else {
            tracing::warn!(
                event_type = type_text,
                version,
                "Skipped a stored event this version cannot read."
            );
            return Ok(None);
        };
        let dealership: String = row.try_get("dealership")?;
        let sequence = u64::try_from(row.try_get::<i64, _>("sequence")?).unwrap_or_default();
        let resource_id: String = row.try_get("resource_id")?;
        let kind: ResourceKind = event_type.resource_kind();
        let data: String = row.try_get("data")?;
        let event = Event {
            id: Event::id_for(&dealership, sequence),
            sequence,
            event_type,
            resource: EventResource {
                kind,
                uri: kind.uri(&dealership, &resource_id),
                id: resource_id,
            },
            change: event_type.change(),
            occurred_at: parse_ts(&row.try_get::<String, _>("occurred_at")?),
            observed_at: parse_ts(&row.try_get::<String, _>("observed_at")?),
            data: serde_json::from_str(&data).unwrap_or_default(),
            dealership_id: dealership,
        };
        Ok(Some(StoredEvent {
            event,
            owner: row.try_get("owner")?,
        }))
    })();
    parsed.transpose()
}

fn parse_ts(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

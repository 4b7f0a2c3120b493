//! SQL for the lead outbox (`lead_deliveries`): leasing due deliveries and
//! recording how each attempt went. The outbox decides; this only writes.

use chrono::{DateTime, Utc};
use sqlx::{Any, AssertSqlSafe, Row, Transaction};

use super::ts;
use super::{Store, StoreDialect, StoreError, events};
use crate::model::event::NewEvent;

/// A delivery leased to this process.
pub struct DueDelivery {
    pub lead_id: String,
    pub upstream: String,
    /// Counting this one.
    pub attempts: u32,
    pub document: String,
    pub traceparent: Option<String>,
}

/// Leases up to `limit` deliveries due at `now` until `lease_until`, counting
/// an attempt each. On PostgreSQL, `SKIP LOCKED` lets every process claim at
/// once, each taking rows no other is taking; SQLite has one writer, this
/// process's write turn.
pub async fn claim_due(
    store: &Store,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<DueDelivery>, StoreError> {
    let _turn = store.write_turn().await;
    let lock = match store.dialect() {
        StoreDialect::Postgres => " FOR UPDATE SKIP LOCKED",
        StoreDialect::Sqlite => "",
    };
    // The outer WHERE repeats the due test: a row another process leased
    // between this one's read and its lock is not taken twice.
    let sql = format!(
        "UPDATE lead_deliveries
         SET lease_until = $1, attempts = attempts + 1, last_attempt_at = $2
         WHERE lead_id IN (
             SELECT lead_id FROM lead_deliveries
             WHERE state = 'pending' AND next_attempt_at <= $2
               AND (lease_until IS NULL OR lease_until <= $2)
             ORDER BY next_attempt_at LIMIT $3{lock})
           AND state = 'pending' AND (lease_until IS NULL OR lease_until <= $2)
         RETURNING lead_id, upstream, attempts, document, traceparent"
    );
    let rows = sqlx::query(AssertSqlSafe(sql))
        .bind(ts(lease_until))
        .bind(ts(now))
        .bind(limit)
        .fetch_all(store.pool())
        .await?;
    rows.iter()
        .map(|r| {
            Ok(DueDelivery {
                lead_id: r.try_get("lead_id")?,
                upstream: r.try_get("upstream")?,
                attempts: u32::try_from(r.try_get::<i64, _>("attempts")?).unwrap_or(u32::MAX),
                document: store.sealing().open(
                    "lead_deliveries.document",
                    &r.try_get::<String, _>("document")?,
                )?,
                traceparent: r.try_get("traceparent")?,
            })
        })
        .collect()
}

/// When the next pending delivery falls due (or its lease runs out), if any.
pub async fn next_due(store: &Store) -> Result<Option<DateTime<Utc>>, StoreError> {
    let next: Option<String> = sqlx::query_scalar(
        "SELECT MIN(CASE WHEN lease_until IS NOT NULL AND lease_until > next_attempt_at
                    THEN lease_until ELSE next_attempt_at END)
         FROM lead_deliveries WHERE state = 'pending'",
    )
    .fetch_one(store.pool())
    .await?;
    Ok(next
        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| t.with_timezone(&Utc)))
}

/// The CRM took the lead; its `lead.delivery_updated` event commits with it.
pub async fn delivered(
    store: &Store,
    lead_id: &str,
    at: DateTime<Utc>,
    receipt: Option<&str>,
) -> Result<(), StoreError> {
    let mut write = store.write().await?;
    sqlx::query(
        "UPDATE lead_deliveries SET state = 'delivered', delivered_at = $1, receipt = $2,
             lease_until = NULL, last_error = NULL
         WHERE lead_id = $3",
    )
    .bind(ts(at))
    .bind(receipt)
    .bind(lead_id)
    .execute(&mut *write.tx)
    .await?;
    let dealership = record_event(&mut write.tx, lead_id, at).await?;
    write.tx.commit().await?;
    if let Some(dealership) = dealership {
        store.announce_events(&dealership).await;
    }
    Ok(())
}

/// An attempt failed: `state` is `pending` (tried again at `next`) or `failed`.
pub async fn attempt_failed(
    store: &Store,
    lead_id: &str,
    state: &str,
    next: DateTime<Utc>,
    error_class: &str,
) -> Result<(), StoreError> {
    let mut write = store.write().await?;
    sqlx::query(
        "UPDATE lead_deliveries SET state = $1, next_attempt_at = $2, last_error = $3, lease_until = NULL
         WHERE lead_id = $4",
    )
    .bind(state)
    .bind(ts(next))
    .bind(error_class)
    .bind(lead_id)
    .execute(&mut *write.tx)
    .await?;
    let dealership = record_event(&mut write.tx, lead_id, Utc::now()).await?;
    write.tx.commit().await?;
    if let Some(dealership) = dealership {
        store.announce_events(&dealership).await;
    }
    Ok(())
}

/// Appends the `lead.delivery_updated` event for where `lead_id`'s delivery
/// now stands, owned by the lead's first submitter. Returns the lead's
/// dealership (`None`: no such lead, no event).
pub(super) async fn record_event(
    tx: &mut Transaction<'static, Any>,
    lead_id: &str,
    at: DateTime<Utc>,
) -> Result<Option<String>, StoreError> {
    let row = sqlx::query(
        "SELECT l.dealership, d.state, d.attempts,
             (SELECT s.principal FROM lead_submissions s WHERE s.lead_id = l.lead_id
                 ORDER BY s.received_at LIMIT 1) AS owner
         FROM leads l JOIN lead_deliveries d ON d.lead_id = l.lead_id
         WHERE l.lead_id = $1",
    )
    .bind(lead_id)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let dealership: String = row.try_get("dealership")?;
    let state: String = row.try_get("state")?;
    let attempts = u32::try_from(row.try_get::<i64, _>("attempts")?).unwrap_or(u32::MAX);
    let event = NewEvent::lead_delivery(lead_id, row.try_get("owner")?, &state, attempts, at);
    events::append_in(tx, &dealership, &[event], at).await?;
    Ok(Some(dealership))
}

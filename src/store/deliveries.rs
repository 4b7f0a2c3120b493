//! SQL for the lead outbox (`lead_deliveries`): leasing due deliveries and
//! recording how each attempt went. The outbox decides; this only writes.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::leads::ts;
use super::{Store, StoreError};

/// A delivery leased to this process.
pub struct DueDelivery {
    pub lead_id: String,
    pub upstream: String,
    /// Counting this one.
    pub attempts: u32,
    pub document: String,
    pub traceparent: Option<String>,
}

/// Leases up to `limit` deliveries due at `now` until `lease_until`, counting an attempt each.
pub async fn claim_due(
    store: &Store,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<DueDelivery>, StoreError> {
    let _turn = store.write_turn().await;
    let rows = sqlx::query(
        "UPDATE lead_deliveries
         SET lease_until = ?, attempts = attempts + 1, last_attempt_at = ?
         WHERE lead_id IN (
             SELECT lead_id FROM lead_deliveries
             WHERE state = 'pending' AND next_attempt_at <= ?
               AND (lease_until IS NULL OR lease_until <= ?)
             ORDER BY next_attempt_at LIMIT ?)
         RETURNING lead_id, upstream, attempts, document, traceparent",
    )
    .bind(ts(lease_until))
    .bind(ts(now))
    .bind(ts(now))
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
                document: r.try_get("document")?,
                traceparent: r.try_get("traceparent")?,
            })
        })
        .collect()
}

/// The CRM took the lead.
pub async fn delivered(
    store: &Store,
    lead_id: &str,
    at: DateTime<Utc>,
    receipt: Option<&str>,
) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query(
        "UPDATE lead_deliveries SET state = 'delivered', delivered_at = ?, receipt = ?,
             lease_until = NULL, last_error = NULL
         WHERE lead_id = ?",
    )
    .bind(ts(at))
    .bind(receipt)
    .bind(lead_id)
    .execute(store.pool())
    .await?;
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
    let _turn = store.write_turn().await;
    sqlx::query(
        "UPDATE lead_deliveries SET state = ?, next_attempt_at = ?, last_error = ?, lease_until = NULL
         WHERE lead_id = ?",
    )
    .bind(state)
    .bind(ts(next))
    .bind(error_class)
    .bind(lead_id)
    .execute(store.pool())
    .await?;
    Ok(())
}

//! What the operator's status page reads: the lead outbox by standing, the
//! deliveries in trouble, webhook dead letters and recent tool-call outcomes.
//! Read-only; no customer data (leads appear by id, as in the logs).

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{Store, StoreError, ts};

/// Leads waiting or failing at one CRM, by how they stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxCount {
    pub dealership: String,
    pub upstream: String,
    /// `queued` (not tried yet), `failing` (tried, to be tried again) or
    /// `dead` (given up; staff must follow up or retry).
    pub standing: String,
    pub count: u64,
}

/// A lead whose delivery failed at least once and has not gone through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TroubledDelivery {
    pub lead_id: String,
    pub dealership: String,
    pub upstream: String,
    /// `failing` or `dead`.
    pub standing: String,
    pub attempts: i64,
    /// The class of the CRM's last answer (`http_500`, `timeout`…).
    pub last_error: Option<String>,
    pub last_attempt_at: Option<String>,
    pub next_attempt_at: Option<String>,
}

const STANDING: &str = "CASE WHEN d.state = 'failed' THEN 'dead'
    WHEN d.last_error IS NOT NULL THEN 'failing' ELSE 'queued' END";

/// Every undelivered lead counted by dealership, CRM and standing.
pub async fn outbox_counts(store: &Store) -> Result<Vec<OutboxCount>, StoreError> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT l.dealership, d.upstream, {STANDING} AS standing, COUNT(*) AS n
         FROM lead_deliveries d JOIN leads l ON l.lead_id = d.lead_id
         WHERE d.state <> 'delivered'
         GROUP BY l.dealership, d.upstream, {STANDING}
         ORDER BY l.dealership, d.upstream, standing"
    )))
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(OutboxCount {
                dealership: r.try_get("dealership")?,
                upstream: r.try_get("upstream")?,
                standing: r.try_get("standing")?,
                count: u64::try_from(r.try_get::<i64, _>("n")?).unwrap_or_default(),
            })
        })
        .collect()
}

/// Up to `limit` deliveries in trouble, the dead first, latest attempt first.
pub async fn troubled(store: &Store, limit: u32) -> Result<Vec<TroubledDelivery>, StoreError> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT d.lead_id, l.dealership, d.upstream, {STANDING} AS standing, d.attempts,
             d.last_error, d.last_attempt_at, d.next_attempt_at
         FROM lead_deliveries d JOIN leads l ON l.lead_id = d.lead_id
         WHERE d.state = 'failed' OR (d.state = 'pending' AND d.last_error IS NOT NULL)
         ORDER BY CASE WHEN d.state = 'failed' THEN 0 ELSE 1 END, d.last_attempt_at DESC, d.lead_id
         LIMIT $1"
    )))
    .bind(i64::from(limit))
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(TroubledDelivery {
                lead_id: r.try_get("lead_id")?,
                dealership: r.try_get("dealership")?,
                upstream: r.try_get("upstream")?,
                standing: r.try_get("standing")?,
                attempts: r.try_get::<i64, _>("attempts")?,
                last_error: r.try_get("last_error")?,
                last_attempt_at: r.try_get("last_attempt_at")?,
                next_attempt_at: r.try_get("next_attempt_at")?,
            })
        })
        .collect()
}

/// One event an endpoint gave up on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    pub endpoint: String,
    pub dealership: String,
    pub sequence: u64,
    pub attempts: i64,
    pub last_error: String,
    pub dead_at: String,
}

/// The newest `limit` webhook dead letters, and how many there are.
pub async fn dead_letters(store: &Store, limit: u32) -> Result<(Vec<DeadLetter>, u64), StoreError> {
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM webhook_dead_letters")
        .fetch_one(store.pool())
        .await?;
    let rows = sqlx::query(
        "SELECT endpoint, dealership, sequence, attempts, last_error, dead_at
         FROM webhook_dead_letters ORDER BY dead_at DESC, sequence DESC LIMIT $1",
    )
    .bind(i64::from(limit))
    .fetch_all(store.pool())
    .await?;
    let letters = rows
        .iter()
        .map(|r| {
            Ok(DeadLetter {
                endpoint: r.try_get("endpoint")?,
                dealership: r.try_get("dealership")?,
                sequence: u64::try_from(r.try_get::<i64, _>("sequence")?).unwrap_or_default(),
                attempts: r.try_get::<i64, _>("attempts")?,
                last_error: r.try_get("last_error")?,
                dead_at: r.try_get("dead_at")?,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok((letters, u64::try_from(total).unwrap_or_default()))
}

/// Tool calls since a time, by tool, dealership and outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcomes {
    pub tool: String,
    pub dealership: Option<String>,
    pub outcome: String,
    pub calls: u64,
    /// The latest such call.
    pub last_at: String,
}

/// Audited tool calls since `since`, grouped (empty when `[store] audit` is off).
pub async fn recent_outcomes(
    store: &Store,
    since: DateTime<Utc>,
) -> Result<Vec<Outcomes>, StoreError> {
    let rows = sqlx::query(
        "SELECT tool, dealership, outcome, COUNT(*) AS calls, MAX(at) AS last_at
         FROM audit_log WHERE at >= $1
         GROUP BY tool, dealership, outcome
         ORDER BY tool, dealership, outcome",
    )
    .bind(ts(since))
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Outcomes {
                tool: r.try_get("tool")?,
                dealership: r.try_get("dealership")?,
                outcome: r.try_get("outcome")?,
                calls: u64::try_from(r.try_get::<i64, _>("calls")?).unwrap_or_default(),
                last_at: r.try_get("last_at")?,
            })
        })
        .collect()
}

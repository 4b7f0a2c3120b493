//! SQL for what CRMs say became of leads (`migrations/*/0018`): which
//! delivered leads to ask about next, and each answer, with the
//! `lead.status_changed` event when the status moved, written together.
//! (`leads.get` reads the status with the lead, `store::leads`.)

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Row};

use super::ts;
use super::{Store, StoreError, events};
use crate::model::crm::CrmStatus;
use crate::model::event::NewEvent;

/// Version of a stored status row's shape; bump it with a migration of old rows.
const STATUS_SCHEMA_VERSION: i64 = 1;

/// A delivered lead whose CRM status is still open.
pub struct OpenLead {
    pub lead_id: String,
    /// The CRM's id for it (the delivery's receipt).
    pub crm_lead_id: String,
}

/// Up to `limit` leads `upstream` accepted since `since` whose status is not
/// final, least recently checked first (never checked before all).
pub async fn open_leads(
    store: &Store,
    upstream: &str,
    since: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<OpenLead>, StoreError> {
    // The final statuses, from the model (constants, not input).
    let closed = CrmStatus::ALL
        .iter()
        .filter(|s| s.is_final())
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT d.lead_id, d.receipt FROM lead_deliveries d
         LEFT JOIN lead_crm_statuses s ON s.lead_id = d.lead_id
         WHERE d.upstream = $1 AND d.state = 'delivered' AND d.receipt IS NOT NULL
           AND d.delivered_at >= $2
           AND (s.status IS NULL OR s.status NOT IN ({closed}))
         ORDER BY COALESCE(s.checked_at, ''), d.lead_id
         LIMIT $3"
    );
    let rows = sqlx::query(AssertSqlSafe(sql))
        .bind(upstream)
        .bind(ts(since))
        .bind(limit)
        .fetch_all(store.pool())
        .await?;
    rows.iter()
        .map(|r| {
            Ok(OpenLead {
                lead_id: r.try_get("lead_id")?,
                crm_lead_id: r.try_get("receipt")?,
            })
        })
        .collect()
}

/// Records that the CRM says `lead_id` is `status` at `at`. A lead is `new`
/// until the CRM says otherwise; a different status than the last one is a
/// `lead.status_changed` event (owned by the lead's first submitter) in the
/// same transaction. Returns the event's sequence, if one was written.
pub async fn record(
    store: &Store,
    lead_id: &str,
    status: CrmStatus,
    at: DateTime<Utc>,
) -> Result<Option<u64>, StoreError> {
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    store
        .lock(tx, &format!("lead_crm_statuses/{lead_id}"))
        .await?;
    let previous: Option<String> =
        sqlx::query_scalar("SELECT status FROM lead_crm_statuses WHERE lead_id = $1")
            .bind(lead_id)
            .fetch_optional(&mut **tx)
            .await?;
    let previous = previous
        .as_deref()
        .and_then(CrmStatus::parse)
        .unwrap_or(CrmStatus::New);
    let changed = previous != status;
    sqlx::query(
        "INSERT INTO lead_crm_statuses (lead_id, schema_version, status, changed_at, checked_at)
         VALUES ($1, $2, $3, $4, $4)
         ON CONFLICT (lead_id) DO UPDATE SET schema_version = $2, status = $3, checked_at = $4,
             changed_at = CASE WHEN lead_crm_statuses.status = $3
                 THEN lead_crm_statuses.changed_at ELSE $4 END",
    )
    .bind(lead_id)
    .bind(STATUS_SCHEMA_VERSION)
    .bind(status.as_str())
    .bind(ts(at))
    .execute(&mut **tx)
    .await?;
    let mut sequence = None;
    let mut dealership = None;
    if changed {
        let row = sqlx::query(
            "SELECT l.dealership,
                 (SELECT s.principal FROM lead_submissions s WHERE s.lead_id = l.lead_id
                     ORDER BY s.received_at LIMIT 1) AS owner
             FROM leads l WHERE l.lead_id = $1",
        )
        .bind(lead_id)
        .fetch_optional(&mut **tx)
        .await?;
        if let Some(row) = row {
            let at_dealership: String = row.try_get("dealership")?;
            let event = NewEvent::lead_status(lead_id, row.try_get("owner")?, status, previous, at);
            sequence = events::append_in(tx, &at_dealership, &[event], at)
                .await?
                .first()
                .copied();
            dealership = Some(at_dealership);
        }
    }
    write.tx.commit().await?;
    if let Some(dealership) = dealership {
        store.announce_events(&dealership).await;
    }
    Ok(sequence)
}

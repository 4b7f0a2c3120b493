//! SQL for repair-order statuses (`migrations/*/0011`): the last status seen of
//! each repair order the bridge read, and the `repair_order.updated` event
//! when a later read sees another one, written together.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Row};

use super::ts;
use super::{Store, StoreError, events};
use crate::model::event::NewEvent;
use crate::model::repair_order::RoStatus;

/// Version of a stored status row's shape; bump it with a migration of old rows.
const STATUS_SCHEMA_VERSION: i64 = 1;

/// Records the statuses just read at `dealership`. Orders seen for the first
/// time are stored without an event; each order whose status differs from
/// the stored one gets a `repair_order.updated` event in the same
/// transaction. Returns the events' sequences. Reads that change nothing
/// take no write lock.
pub async fn record_statuses(
    store: &Store,
    dealership: &str,
    seen: &[(&str, RoStatus)],
    at: DateTime<Utc>,
) -> Result<Vec<u64>, StoreError> {
    if seen.is_empty() || unchanged(store, dealership, seen).await? {
        return Ok(Vec::new());
    }
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    // Two reads of one order at once must not both report its change.
    store
        .lock(tx, &format!("repair_order_statuses/{dealership}"))
        .await?;
    let mut changes = Vec::new();
    for &(ro_number, status) in seen {
        let previous: Option<String> = sqlx::query_scalar(
            "SELECT status FROM repair_order_statuses WHERE dealership = $1 AND ro_number = $2",
        )
        .bind(dealership)
        .bind(ro_number)
        .fetch_optional(&mut **tx)
        .await?;
        if previous.as_deref() == Some(status.as_str()) {
            continue;
        }
        sqlx::query(
            "INSERT INTO repair_order_statuses (dealership, ro_number, schema_version, status, changed_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (dealership, ro_number) DO UPDATE SET schema_version = $3,
                 status = $4, changed_at = $5",
        )
        .bind(dealership)
        .bind(ro_number)
        .bind(STATUS_SCHEMA_VERSION)
        .bind(status.as_str())
        .bind(ts(at))
        .execute(&mut **tx)
        .await?;
        // A status stored by a later version and unknown here still counts as a change.
        if let Some(previous) = previous {
            let previous = RoStatus::parse(&previous);
            changes.push(NewEvent::repair_order_status(
                ro_number, status, previous, at,
            ));
        }
    }
    let sequences = events::append_in(tx, dealership, &changes, at).await?;
    write.tx.commit().await?;
    if !sequences.is_empty() {
        store.announce_events(dealership).await;
    }
    Ok(sequences)
}

/// True when every order in `seen` is stored with the status seen now.
async fn unchanged(
    store: &Store,
    dealership: &str,
    seen: &[(&str, RoStatus)],
) -> Result<bool, StoreError> {
    let mut stored = HashMap::with_capacity(seen.len());
    // Bounded IN lists: SQLite and PostgreSQL both cap bind parameters.
    for chunk in seen.chunks(500) {
        // Only numbered placeholders are spliced in; every value is bound.
        let sql = format!(
            "SELECT ro_number, status FROM repair_order_statuses
             WHERE dealership = $1 AND ro_number IN ({})",
            super::placeholders(2, chunk.len())
        );
        let mut query = sqlx::query(AssertSqlSafe(sql)).bind(dealership);
        for (ro_number, _) in chunk {
            query = query.bind(*ro_number);
        }
        for row in query.fetch_all(store.pool()).await? {
            stored.insert(row.try_get::<String, _>(0)?, row.try_get::<String, _>(1)?);
        }
    }
    Ok(seen
        .iter()
        .all(|(ro, status)| stored.get(*ro).map(String::as_str) == Some(status.as_str())))
}

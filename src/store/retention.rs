//! SQL for the retention purge: each function removes (or, for a lead's
//! details, minimises) at most `limit` rows past `cutoff` in one
//! transaction, a record and everything that hangs on it together, so an
//! interrupted purge leaves no half-removed lead. The caller repeats until a
//! batch comes back short.

use chrono::{DateTime, Utc};
use sqlx::{Any, AssertSqlSafe, Transaction};

use super::{Store, StoreDialect, StoreError, in_list, json_list, ts};

/// Drops the rendered ADF documents of leads delivered before `cutoff` (the
/// CRM has them); undelivered leads keep theirs for a retry.
pub async fn lead_documents(
    store: &Store,
    cutoff: DateTime<Utc>,
    limit: u32,
) -> Result<u64, StoreError> {
    let _turn = store.write_turn().await;
    let done = sqlx::query(
        "UPDATE lead_deliveries SET document = ''
         WHERE lead_id IN (SELECT lead_id FROM lead_deliveries
             WHERE state = 'delivered' AND delivered_at < $1 AND document <> '' LIMIT $2)",
    )
    .bind(ts(cutoff))
    .bind(i64::from(limit))
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected())
}

/// Reduces a stored lead (its plain request) to what proves consent; `None`
/// when the request cannot be read (the lead then keeps nothing of it).
pub type Minimise<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

/// Minimises leads created before `cutoff`: their request becomes what
/// `minimise` keeps, and their delivery (document included), CRM status,
/// appointment outcome and events go. Leads still being delivered wait.
pub async fn minimise_leads(
    store: &Store,
    cutoff: DateTime<Utc>,
    limit: u32,
    minimise: Minimise<'_>,
) -> Result<u64, StoreError> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT l.lead_id, l.request FROM leads l
         WHERE l.created_at < $1 AND l.minimised_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM lead_deliveries d
               WHERE d.lead_id = l.lead_id AND d.state = 'pending')
         ORDER BY l.created_at LIMIT $2",
    )
    .bind(ts(cutoff))
    .bind(i64::from(limit))
    .fetch_all(store.pool())
    .await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let s = store.sealing();
    let mut kept = Vec::with_capacity(rows.len());
    for (lead_id, request) in &rows {
        let plain = s.open("leads.request", request)?;
        let small = minimise(&plain).unwrap_or_else(|| "{}".to_owned());
        kept.push((lead_id, request, s.seal("leads.request", &small)?));
    }
    let ids: Vec<&String> = rows.iter().map(|(id, _)| id).collect();
    let now = ts(Utc::now());
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    delete_lead_dependents(tx, store.dialect(), &ids, false).await?;
    let mut done = 0;
    for (lead_id, old, new) in kept {
        done += sqlx::query(
            "UPDATE leads SET request = $1, appointment = NULL, minimised_at = $2,
                 sealed_with = $3
             WHERE lead_id = $4 AND request = $5 AND minimised_at IS NULL",
        )
        .bind(new)
        .bind(&now)
        .bind(s.sealed_with())
        .bind(lead_id)
        .bind(old)
        .execute(&mut **tx)
        .await?
        .rows_affected();
    }
    write.tx.commit().await?;
    Ok(done)
}

/// Removes leads created before `cutoff` altogether: what was left of them
/// and every submission's consent grant.
pub async fn consent_grants(
    store: &Store,
    cutoff: DateTime<Utc>,
    limit: u32,
) -> Result<u64, StoreError> {
    let ids: Vec<String> = sqlx::query_scalar(
        "SELECT l.lead_id FROM leads l
         WHERE l.created_at < $1
           AND NOT EXISTS (SELECT 1 FROM lead_deliveries d
               WHERE d.lead_id = l.lead_id AND d.state = 'pending')
         ORDER BY l.created_at LIMIT $2",
    )
    .bind(ts(cutoff))
    .bind(i64::from(limit))
    .fetch_all(store.pool())
    .await?;
    if ids.is_empty() {
        return Ok(0);
    }
    let ids: Vec<&String> = ids.iter().collect();
    let mut write = store.write().await?;
    let done = delete_leads(&mut write.tx, store.dialect(), &ids).await?;
    write.tx.commit().await?;
    Ok(done)
}

/// Deletes the leads `ids` and everything of theirs, in `tx`: submissions
/// (consent grants), deliveries, CRM statuses, events. Leads merged into
/// one of them lose the link (they are the same customer's, and go with
/// their own retention or erasure).
pub(super) async fn delete_leads(
    tx: &mut Transaction<'static, Any>,
    dialect: StoreDialect,
    ids: &[&String],
) -> Result<u64, StoreError> {
    delete_lead_dependents(tx, dialect, ids, true).await?;
    let list = in_list(dialect, 1);
    execute(
        tx,
        &format!("UPDATE leads SET merged_into = NULL WHERE merged_into {list}"),
        ids,
    )
    .await?;
    execute(tx, &format!("DELETE FROM leads WHERE lead_id {list}"), ids).await
}

/// Deletes what hangs on the leads `ids` besides the lead rows themselves,
/// and their submissions when `submissions`.
async fn delete_lead_dependents(
    tx: &mut Transaction<'static, Any>,
    dialect: StoreDialect,
    ids: &[&String],
    submissions: bool,
) -> Result<(), StoreError> {
    let list = in_list(dialect, 1);
    let mut statements = vec![
        format!("DELETE FROM lead_deliveries WHERE lead_id {list}"),
        format!("DELETE FROM lead_crm_statuses WHERE lead_id {list}"),
        format!("DELETE FROM events WHERE resource_kind = 'lead' AND resource_id {list}"),
    ];
    if submissions {
        statements.push(format!("DELETE FROM lead_submissions WHERE lead_id {list}"));
    }
    for sql in statements {
        execute(tx, &sql, ids).await?;
    }
    Ok(())
}

/// Runs `sql`, whose one parameter `$1` is the list `ids` ([`in_list`]).
pub(super) async fn execute(
    tx: &mut Transaction<'static, Any>,
    sql: &str,
    ids: &[&String],
) -> Result<u64, StoreError> {
    // Only `in_list`'s fixed text is spliced into the callers' statements.
    let query = sqlx::query(AssertSqlSafe(sql.to_owned())).bind(json_list(ids));
    Ok(query.execute(&mut **tx).await?.rows_affected())
}

/// Removes settled service bookings created before `cutoff`, with their
/// consent grant and their appointment events.
pub async fn bookings(store: &Store, cutoff: DateTime<Utc>, limit: u32) -> Result<u64, StoreError> {
    let rows: Vec<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT booking_id, dealership, appointment_id FROM service_bookings
         WHERE created_at < $1 AND state = 'settled' ORDER BY created_at LIMIT $2",
    )
    .bind(ts(cutoff))
    .bind(i64::from(limit))
    .fetch_all(store.pool())
    .await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let mut write = store.write().await?;
    let done = delete_bookings(&mut write.tx, &rows).await?;
    write.tx.commit().await?;
    Ok(done)
}

/// Deletes bookings (id, dealership, appointment id) and their events, in `tx`.
pub(super) async fn delete_bookings(
    tx: &mut Transaction<'static, Any>,
    rows: &[(String, String, Option<String>)],
) -> Result<u64, StoreError> {
    let mut done = 0;
    for (booking_id, dealership, appointment_id) in rows {
        if let Some(appointment) = appointment_id {
            sqlx::query(
                "DELETE FROM events WHERE dealership = $1 AND resource_kind = 'appointment'
                     AND resource_id = $2",
            )
            .bind(dealership)
            .bind(appointment)
            .execute(&mut **tx)
            .await?;
        }
        done += sqlx::query("DELETE FROM service_bookings WHERE booking_id = $1")
            .bind(booking_id)
            .execute(&mut **tx)
            .await?
            .rows_affected();
    }
    Ok(done)
}

/// Removes audit rows (tool calls and refused requests) older than `cutoff`.
pub async fn audit(store: &Store, cutoff: DateTime<Utc>, limit: u32) -> Result<u64, StoreError> {
    let _turn = store.write_turn().await;
    let done = sqlx::query(
        "DELETE FROM audit_log WHERE id IN
             (SELECT id FROM audit_log WHERE at < $1 ORDER BY id LIMIT $2)",
    )
    .bind(ts(cutoff))
    .bind(i64::from(limit))
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected())
}

/// Removes mirror units gone from their inventory before `cutoff`.
pub async fn departed_units(
    store: &Store,
    cutoff: DateTime<Utc>,
    limit: u32,
) -> Result<u64, StoreError> {
    let _turn = store.write_turn().await;
    let done = sqlx::query(
        "DELETE FROM mirror_units WHERE (dealership, vehicle_id) IN
             (SELECT dealership, vehicle_id FROM mirror_units
              WHERE state = 'gone' AND changed_at < $1 LIMIT $2)",
    )
    .bind(ts(cutoff))
    .bind(i64::from(limit))
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected())
}

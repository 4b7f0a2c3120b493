//! Erasing one customer: every lead and booking whose keyed contact hashes
//! match an e-mail address or phone number, with everything that hangs on
//! them (consent grants, deliveries and their documents, CRM statuses,
//! events), in one transaction, and a record that the erasure happened that
//! holds no erased data. A lead still queued for the CRM is cancelled with
//! its delivery row; one being sent at that moment is named as in flight.

use std::collections::BTreeMap;

use chrono::Utc;
use serde::Serialize;
use sqlx::AssertSqlSafe;

use super::sealing::{email_material, phone_material};
use super::{Store, StoreError, in_list, json_list, placeholders, retention, ts};

/// Who the erasure is for: an e-mail address, a phone number, or both.
#[derive(Debug, Clone, Default)]
pub struct Subject {
    pub email: Option<String>,
    pub phone: Option<String>,
    /// Only this dealership's records; `None`: every dealership's.
    pub dealership: Option<String>,
}

/// What an erasure finds (or found).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Found {
    /// Lead ids with their dealership.
    pub leads: Vec<(String, String)>,
    /// Booking ids with their dealership and the scheduler's appointment id.
    pub bookings: Vec<(String, String, Option<String>)>,
    /// Leads whose delivery was leased to an outbox when found: being sent.
    pub in_flight: Vec<String>,
    /// Queued deliveries that erasure cancels.
    pub queued: Vec<String>,
}

impl Found {
    pub fn is_empty(&self) -> bool {
        self.leads.is_empty() && self.bookings.is_empty()
    }
}

/// Rows erased, by kind.
pub type Erased = BTreeMap<&'static str, u64>;

/// The hashes `subject` may be stored under, e-mail's and phone's.
fn lookups(store: &Store, subject: &Subject) -> (Vec<String>, Vec<String>) {
    let s = store.sealing();
    let email = subject
        .email
        .as_deref()
        .map(|e| s.lookups(&email_material(e)))
        .unwrap_or_default();
    let phone = subject
        .phone
        .as_deref()
        .map(|p| s.lookups(&phone_material(p)))
        .unwrap_or_default();
    (email, phone)
}

/// Rows from before sealing have no contact hashes yet; erasure waits for
/// the reseal to give them theirs (`dms-bridge erase` runs it first).
pub async fn unhashed(store: &Store) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM leads WHERE sealed_with IS NULL)
              + (SELECT COUNT(*) FROM service_bookings WHERE sealed_with IS NULL)",
    )
    .fetch_one(store.pool())
    .await?)
}

/// What erasing `subject` would remove, read now.
pub async fn find(store: &Store, subject: &Subject) -> Result<Found, StoreError> {
    let (email, phone) = lookups(store, subject);
    let mut hashes = email.clone();
    hashes.extend(phone.iter().cloned());
    if hashes.is_empty() {
        return Ok(Found::default());
    }
    let marks = placeholders(2, hashes.len());
    // A lead merged into a matching lead is the same customer's (same fingerprint).
    let leads_sql = format!(
        "SELECT lead_id, dealership FROM leads
         WHERE ($1 IS NULL OR dealership = $1)
           AND (contact_email IN ({marks}) OR contact_phone IN ({marks})
             OR merged_into IN (SELECT lead_id FROM leads
                 WHERE contact_email IN ({marks}) OR contact_phone IN ({marks})))
         ORDER BY created_at"
    );
    let mut q = sqlx::query_as(AssertSqlSafe(leads_sql)).bind(subject.dealership.clone());
    for h in &hashes {
        q = q.bind(h.clone());
    }
    let leads: Vec<(String, String)> = q.fetch_all(store.pool()).await?;
    let bookings_sql = format!(
        "SELECT booking_id, dealership, appointment_id FROM service_bookings
         WHERE ($1 IS NULL OR dealership = $1)
           AND (contact_email IN ({marks}) OR contact_phone IN ({marks}))
         ORDER BY created_at"
    );
    let mut q = sqlx::query_as(AssertSqlSafe(bookings_sql)).bind(subject.dealership.clone());
    for h in &hashes {
        q = q.bind(h.clone());
    }
    let bookings = q.fetch_all(store.pool()).await?;
    let (in_flight, queued) = pending(store, &leads).await?;
    Ok(Found {
        leads,
        bookings,
        in_flight,
        queued,
    })
}

/// Of `leads`, those being sent now (leased) and those queued.
async fn pending(
    store: &Store,
    leads: &[(String, String)],
) -> Result<(Vec<String>, Vec<String>), StoreError> {
    if leads.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let sql = format!(
        "SELECT lead_id, CASE WHEN lease_until IS NOT NULL AND lease_until > $1 THEN 1 ELSE 0 END
         FROM lead_deliveries WHERE state = 'pending' AND lead_id {}",
        in_list(store.dialect(), 2)
    );
    let ids: Vec<&str> = leads.iter().map(|(id, _)| id.as_str()).collect();
    let q = sqlx::query_as(AssertSqlSafe(sql))
        .bind(ts(Utc::now()))
        .bind(json_list(&ids));
    let rows: Vec<(String, i64)> = q.fetch_all(store.pool()).await?;
    let (leased, queued): (Vec<_>, Vec<_>) = rows.into_iter().partition(|(_, l)| *l == 1);
    Ok((
        leased.into_iter().map(|(id, _)| id).collect(),
        queued.into_iter().map(|(id, _)| id).collect(),
    ))
}

/// Erases what `find` finds now, and records the erasure (by whom, under
/// which reference, how many rows of each kind), in one transaction.
pub async fn erase(
    store: &Store,
    subject: &Subject,
    requested_by: &str,
    reference: Option<&str>,
) -> Result<(Found, Erased), StoreError> {
    let found = find(store, subject).await?;
    let mut erased = Erased::new();
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    if !found.leads.is_empty() {
        let ids: Vec<&String> = found.leads.iter().map(|(id, _)| id).collect();
        let list = in_list(store.dialect(), 1);
        for (kind, table) in [
            ("consent_grants", "lead_submissions"),
            ("lead_deliveries", "lead_deliveries"),
        ] {
            let sql = format!("SELECT COUNT(*) FROM {table} WHERE lead_id {list}");
            let q = sqlx::query_scalar(AssertSqlSafe(sql)).bind(json_list(&ids));
            let n: i64 = q.fetch_one(&mut **tx).await?;
            erased.insert(kind, u64::try_from(n).unwrap_or_default());
        }
        let events = format!(
            "SELECT COUNT(*) FROM events WHERE resource_kind = 'lead' AND resource_id {list}"
        );
        let q = sqlx::query_scalar(AssertSqlSafe(events)).bind(json_list(&ids));
        let n: i64 = q.fetch_one(&mut **tx).await?;
        erased.insert("lead_events", u64::try_from(n).unwrap_or_default());
        erased.insert(
            "leads",
            retention::delete_leads(tx, store.dialect(), &ids).await?,
        );
    }
    if !found.bookings.is_empty() {
        erased.insert(
            "bookings",
            retention::delete_bookings(tx, &found.bookings).await?,
        );
    }
    let record = serde_json::to_string(&erased).map_err(|e| StoreError::Encode(e.to_string()))?;
    sqlx::query(
        "INSERT INTO erasures (erasure_id, at, requested_by, reference, dealership, erased)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(format!("er_{}", uuid::Uuid::now_v7().simple()))
    .bind(ts(Utc::now()))
    .bind(requested_by)
    .bind(reference)
    .bind(subject.dealership.clone())
    .bind(record)
    .execute(&mut **tx)
    .await?;
    write.tx.commit().await?;
    Ok((found, erased))
}

/// A past erasure as recorded.
#[derive(Debug, Clone, Serialize)]
pub struct ErasureRecord {
    pub erasure_id: String,
    pub at: String,
    pub requested_by: String,
    pub reference: Option<String>,
    pub dealership: Option<String>,
    pub erased: serde_json::Value,
}

pub async fn records(store: &Store) -> Result<Vec<ErasureRecord>, StoreError> {
    type Row = (
        String,
        String,
        String,
        Option<String>,
        Option<String>,
        String,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT erasure_id, at, requested_by, reference, dealership, erased FROM erasures ORDER BY at",
    )
    .fetch_all(store.pool())
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(erasure_id, at, requested_by, reference, dealership, erased)| ErasureRecord {
                erasure_id,
                at,
                requested_by,
                reference,
                dealership,
                erased: serde_json::from_str(&erased).unwrap_or_default(),
            },
        )
        .collect())
}

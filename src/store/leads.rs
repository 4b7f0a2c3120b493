//! SQL for leads: the accept transaction (duplicates, outbox row,
//! consent audit, all or nothing) and the reads behind `leads.get`/`leads.list`.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, AssertSqlSafe, Row, Transaction};

use super::sealing::Identity;
use super::{Store, StoreError, events, ts};
use crate::model::event::NewEvent;

/// A lead ready to be committed.
pub struct NewLead {
    pub lead_id: String,
    pub submission_id: String,
    pub dealership: String,
    pub principal: String,
    pub now: DateTime<Utc>,
    /// Leads since this instant with the same fingerprint make this one a duplicate.
    pub duplicate_since: DateTime<Utc>,
    /// The customer's contact points and what makes two leads equivalent,
    /// stored as keyed hashes (and sealed, to hash again under a new key).
    pub identity: Identity,
    pub source_agent: String,
    pub request: String,
    pub appointment: Option<String>,
    pub consent: String,
    pub upstream: String,
    pub channel: String,
    pub document: String,
    /// W3C traceparent of the accepting call, so deliveries continue its trace.
    pub traceparent: Option<String>,
}

/// What the accept transaction decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A new lead: stored and queued for delivery.
    Received,
    /// This principal sent an equivalent lead recently: recorded on it, not sent again.
    Duplicate { of: String },
    /// Another principal sent an equivalent lead recently: a lead of this
    /// principal's own, not sent again, whose record names the lead carrying
    /// it (`into`; for staff only).
    Merged { into: String },
}

/// Commits `lead` (or recognises a duplicate), atomically: the write
/// transaction and the lock on the lead's fingerprint are taken before the
/// duplicate check, so two concurrent submissions with one fingerprint are
/// decided one after the other. (Idempotency keys are the pipeline's write
/// step's, before this runs.)
pub async fn accept(store: &Store, lead: &NewLead) -> Result<Decision, StoreError> {
    let sealed = Sealed::of(store, lead)?;
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    let fingerprint = format!("leads/{}/{}", lead.dealership, sealed.fingerprint);
    store.lock(tx, &fingerprint).await?;
    let decision = match earlier_own(tx, lead, &sealed.lookups).await? {
        Some(of) => Decision::Duplicate { of },
        None => match earlier_carrying(tx, lead, &sealed.lookups).await? {
            Some(into) => Decision::Merged { into },
            None => Decision::Received,
        },
    };
    let (lead_id, status) = match &decision {
        Decision::Duplicate { of } => (of.clone(), "duplicate"),
        Decision::Merged { .. } => (lead.lead_id.clone(), "merged"),
        Decision::Received => (lead.lead_id.clone(), "received"),
    };
    match &decision {
        Decision::Received => insert_lead(tx, lead, &sealed, None).await?,
        Decision::Merged { into } => insert_lead(tx, lead, &sealed, Some(into)).await?,
        Decision::Duplicate { .. } => {}
    }
    if !matches!(decision, Decision::Duplicate { .. }) {
        let created = NewEvent::lead_created(&lead.lead_id, &lead.principal, lead.now);
        events::append_in(tx, &lead.dealership, &[created], lead.now).await?;
    }
    sqlx::query(
        "INSERT INTO lead_submissions (submission_id, lead_id, dealership, principal, received_at,
             status, consent, sealed_with)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&lead.submission_id)
    .bind(&lead_id)
    .bind(&lead.dealership)
    .bind(&lead.principal)
    .bind(ts(lead.now))
    .bind(status)
    .bind(&sealed.consent)
    .bind(&sealed.with)
    .execute(&mut **tx)
    .await?;
    write.tx.commit().await?;
    match &decision {
        Decision::Received => {
            store.announce_events(&lead.dealership).await;
            store.announce(super::Signal::OutboxDue).await;
        }
        Decision::Merged { .. } => store.announce_events(&lead.dealership).await,
        Decision::Duplicate { .. } => {}
    }
    Ok(decision)
}

/// This principal's latest equivalent lead within the window (one it sent,
/// or one of its own that another's lead carries).
async fn earlier_own(
    tx: &mut Transaction<'static, Any>,
    lead: &NewLead,
    fingerprints: &[String],
) -> Result<Option<String>, StoreError> {
    let sql = "SELECT l.lead_id, l.created_at FROM leads l
         WHERE l.dealership = $1 AND l.fingerprint = $2 AND l.created_at >= $3
           AND l.minimised_at IS NULL
           AND EXISTS (SELECT 1 FROM lead_submissions s
                WHERE s.lead_id = l.lead_id AND s.principal = $4)
         ORDER BY l.created_at DESC LIMIT 1";
    newest(tx, sql, lead, fingerprints, Some(&lead.principal)).await
}

/// The latest equivalent lead within the window that went to the CRM
/// itself (whoever sent it): the one a new equivalent lead is merged into.
async fn earlier_carrying(
    tx: &mut Transaction<'static, Any>,
    lead: &NewLead,
    fingerprints: &[String],
) -> Result<Option<String>, StoreError> {
    let sql = "SELECT lead_id, created_at FROM leads
         WHERE dealership = $1 AND fingerprint = $2 AND created_at >= $3
           AND merged_into IS NULL AND minimised_at IS NULL
         ORDER BY created_at DESC LIMIT 1";
    newest(tx, sql, lead, fingerprints, None).await
}

/// The newest lead `sql` finds under any of `fingerprints` (one per key,
/// while a rotation is under way). One equality query per fingerprint: with
/// `fingerprint IN (…)`, SQLite read every lead of the window through the
/// time index instead of the duplicates index.
async fn newest(
    tx: &mut Transaction<'static, Any>,
    sql: &'static str,
    lead: &NewLead,
    fingerprints: &[String],
    principal: Option<&String>,
) -> Result<Option<String>, StoreError> {
    let mut found: Option<(String, String)> = None;
    for fingerprint in fingerprints {
        let mut query = sqlx::query_as::<_, (String, String)>(sql)
            .bind(&lead.dealership)
            .bind(fingerprint)
            .bind(ts(lead.duplicate_since));
        if let Some(p) = principal {
            query = query.bind(p);
        }
        if let Some((id, at)) = query.fetch_optional(&mut **tx).await?
            && found.as_ref().is_none_or(|(_, newest)| at > *newest)
        {
            found = Some((id, at));
        }
    }
    Ok(found.map(|(id, _)| id))
}

/// A lead's customer data as stored: sealed, with its keyed hashes.
struct Sealed {
    with: String,
    request: String,
    consent: String,
    document: String,
    identity: String,
    fingerprint: String,
    /// Every fingerprint an equivalent earlier lead may carry.
    lookups: Vec<String>,
    email: Option<String>,
    phone: Option<String>,
}

impl Sealed {
    fn of(store: &Store, lead: &NewLead) -> Result<Self, StoreError> {
        let s = store.sealing();
        let (email, phone) = s.contact_hashes(&lead.identity);
        let material = lead.identity.fingerprint.as_deref().unwrap_or_default();
        Ok(Self {
            with: s.sealed_with().to_owned(),
            request: s.seal("leads.request", &lead.request)?,
            consent: s.seal("lead_submissions.consent", &lead.consent)?,
            document: s.seal("lead_deliveries.document", &lead.document)?,
            identity: s.seal_identity("leads.identity", &lead.identity)?,
            fingerprint: s.index(material),
            lookups: s.lookups(material),
            email,
            phone,
        })
    }
}

/// The lead's row, and its delivery unless another lead carries it (`merged_into`).
async fn insert_lead(
    tx: &mut Transaction<'static, Any>,
    lead: &NewLead,
    sealed: &Sealed,
    merged_into: Option<&String>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO leads (lead_id, dealership, created_at, fingerprint, source_agent, request,
             appointment, merged_into, identity, contact_email, contact_phone, sealed_with)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&lead.lead_id)
    .bind(&lead.dealership)
    .bind(ts(lead.now))
    .bind(&sealed.fingerprint)
    .bind(&lead.source_agent)
    .bind(&sealed.request)
    .bind(&lead.appointment)
    .bind(merged_into)
    .bind(&sealed.identity)
    .bind(&sealed.email)
    .bind(&sealed.phone)
    .bind(&sealed.with)
    .execute(&mut **tx)
    .await?;
    if merged_into.is_some() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO lead_deliveries (lead_id, upstream, channel, document, traceparent, state,
             attempts, next_attempt_at, sealed_with)
         VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7)",
    )
    .bind(&lead.lead_id)
    .bind(&lead.upstream)
    .bind(&lead.channel)
    .bind(&sealed.document)
    .bind(&lead.traceparent)
    .bind(ts(lead.now))
    .bind(&sealed.with)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A stored lead with its delivery and first consent grant, as read back.
#[derive(Debug, Clone)]
pub struct StoredLead {
    pub lead_id: String,
    pub dealership: String,
    pub created_at: String,
    pub source_agent: String,
    pub request: String,
    pub appointment: Option<String>,
    pub consent: String,
    pub submissions: i64,
    /// The lead whose delivery carries this one (another principal's).
    pub merged_into: Option<String>,
    /// Leads of other principals merged into this one.
    pub merged: i64,
    pub delivery: StoredDelivery,
    /// What the CRM last said became of the lead, and since when (CRMs read
    /// through their API only).
    pub crm_status: Option<(String, String)>,
}

#[derive(Debug, Clone, Default)]
pub struct StoredDelivery {
    pub channel: String,
    pub state: String,
    pub attempts: i64,
    pub next_attempt_at: Option<String>,
    pub last_attempt_at: Option<String>,
    pub last_error: Option<String>,
    pub delivered_at: Option<String>,
    pub receipt: Option<String>,
}

/// A lead with its delivery: its own, or, for a merged lead, the one of the
/// lead that carries it.
const SELECT_LEAD: &str =
    "SELECT l.lead_id, l.dealership, l.created_at, l.source_agent, l.request, l.appointment,
        l.merged_into,
        d.channel, d.state, d.attempts, d.next_attempt_at, d.last_attempt_at, d.last_error,
        d.delivered_at, d.receipt,
        (SELECT s.consent FROM lead_submissions s WHERE s.lead_id = l.lead_id
            ORDER BY s.received_at LIMIT 1) AS consent,
        (SELECT COUNT(*) FROM lead_submissions s WHERE s.lead_id = l.lead_id) AS submissions,
        (SELECT COUNT(*) FROM leads m WHERE m.merged_into = l.lead_id) AS merged,
        c.status AS crm_status, c.changed_at AS crm_changed_at
    FROM leads l JOIN lead_deliveries d ON d.lead_id = COALESCE(l.merged_into, l.lead_id)
    LEFT JOIN lead_crm_statuses c ON c.lead_id = d.lead_id";

/// Ownership: a lead belongs to every principal that submitted it (the first
/// submission, and any duplicate merged into it). A `NULL` principal is staff.
/// The principal is parameter `$n`.
fn owned_by(n: usize) -> String {
    format!(
        " AND (${n} IS NULL OR EXISTS (SELECT 1 FROM lead_submissions o
        WHERE o.lead_id = l.lead_id AND o.dealership = l.dealership AND o.principal = ${n}))"
    )
}

/// The lead, if `principal` may see it (`None`: anyone may).
pub async fn get(
    store: &Store,
    dealership: &str,
    lead_id: &str,
    principal: Option<&str>,
) -> Result<Option<StoredLead>, StoreError> {
    let row = sqlx::query(AssertSqlSafe(format!(
        "{SELECT_LEAD} WHERE l.dealership = $1 AND l.lead_id = $2{}",
        owned_by(3)
    )))
    .bind(dealership)
    .bind(lead_id)
    .bind(principal)
    .fetch_optional(store.pool())
    .await?;
    row.map(|r| stored_lead(store, &r)).transpose()
}

/// Filters of `leads.list`.
pub struct ListQuery<'a> {
    pub dealership: &'a str,
    /// Only leads this principal submitted (`None`: every lead, for staff).
    pub principal: Option<&'a str>,
    pub states: Vec<String>,
    pub created_after: Option<String>,
    pub created_before: Option<String>,
    pub offset: u64,
    pub limit: u32,
}

/// Newest first; one extra row tells the caller whether a next page exists.
pub async fn list(store: &Store, q: &ListQuery<'_>) -> Result<Vec<StoredLead>, StoreError> {
    let mut sql = format!("{SELECT_LEAD} WHERE l.dealership = $1{}", owned_by(2));
    let mut next = 3;
    if !q.states.is_empty() {
        let marks = super::placeholders(next, q.states.len());
        sql.push_str(&format!(" AND d.state IN ({marks})"));
        next += q.states.len();
    }
    for (bound, op) in [(&q.created_after, ">="), (&q.created_before, "<")] {
        if bound.is_some() {
            sql.push_str(&format!(" AND l.created_at {op} ${next}"));
            next += 1;
        }
    }
    sql.push_str(&format!(
        " ORDER BY l.created_at DESC, l.lead_id DESC LIMIT ${next} OFFSET ${}",
        next + 1
    ));
    // Only placeholders are spliced in; every value is bound, in their order.
    let mut query = sqlx::query(AssertSqlSafe(sql))
        .bind(q.dealership)
        .bind(q.principal);
    for s in &q.states {
        query = query.bind(s);
    }
    for t in [&q.created_after, &q.created_before].into_iter().flatten() {
        query = query.bind(t);
    }
    let rows = query
        .bind(i64::from(q.limit) + 1)
        .bind(i64::try_from(q.offset).unwrap_or(i64::MAX))
        .fetch_all(store.pool())
        .await?;
    rows.iter().map(|r| stored_lead(store, r)).collect()
}

fn stored_lead(store: &Store, r: &AnyRow) -> Result<StoredLead, StoreError> {
    let s = store.sealing();
    let consent: Option<String> = r.try_get("consent")?;
    Ok(StoredLead {
        lead_id: r.try_get("lead_id")?,
        dealership: r.try_get("dealership")?,
        created_at: r.try_get("created_at")?,
        source_agent: r.try_get("source_agent")?,
        request: s.open("leads.request", &r.try_get::<String, _>("request")?)?,
        appointment: r.try_get("appointment")?,
        consent: s
            .open_opt("lead_submissions.consent", consent)?
            .unwrap_or_default(),
        submissions: r.try_get("submissions")?,
        merged_into: r.try_get("merged_into")?,
        merged: r.try_get("merged")?,
        delivery: StoredDelivery {
            channel: r.try_get("channel")?,
            state: r.try_get("state")?,
            attempts: r.try_get("attempts")?,
            next_attempt_at: r.try_get("next_attempt_at")?,
            last_attempt_at: r.try_get("last_attempt_at")?,
            last_error: r.try_get("last_error")?,
            delivered_at: r.try_get("delivered_at")?,
            receipt: r.try_get("receipt")?,
        },
        crm_status: r
            .try_get::<Option<String>, _>("crm_status")?
            .zip(r.try_get::<Option<String>, _>("crm_changed_at")?),
    })
}

/// Where one lead's delivery stands, for the operator: `None` when there is
/// no such lead (in that dealership, if given); else the lead carrying it (if
/// merged) and its delivery state.
pub async fn standing(
    store: &Store,
    dealership: Option<&str>,
    lead_id: &str,
) -> Result<Option<(Option<String>, Option<String>)>, StoreError> {
    let row: Option<(Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT l.merged_into, d.state FROM leads l
         LEFT JOIN lead_deliveries d ON d.lead_id = l.lead_id
         WHERE l.lead_id = $1 AND ($2 IS NULL OR l.dealership = $2)",
    )
    .bind(lead_id)
    .bind(dealership)
    .fetch_optional(store.pool())
    .await?;
    Ok(row)
}

/// Puts failed deliveries back in the outbox with a fresh set of attempts.
/// `attempts` restarts at 1, so the next attempt goes out as a resend. Each
/// requeued lead gets a `lead.delivery_updated` event in the same transaction.
pub async fn requeue_failed(
    store: &Store,
    dealership: Option<&str>,
    lead_id: Option<&str>,
) -> Result<u64, StoreError> {
    let now = Utc::now();
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    let requeued: Vec<String> = sqlx::query_scalar(
        "UPDATE lead_deliveries SET state = 'pending', attempts = 1, next_attempt_at = $1, lease_until = NULL
         WHERE state = 'failed'
           AND ($2 IS NULL OR lead_id IN (SELECT lead_id FROM leads WHERE dealership = $2))
           AND ($3 IS NULL OR lead_id = $3)
         RETURNING lead_id",
    )
    .bind(ts(now))
    .bind(dealership)
    .bind(lead_id)
    .fetch_all(&mut **tx)
    .await?;
    let mut dealerships = std::collections::BTreeSet::new();
    for lead in &requeued {
        dealerships.extend(super::deliveries::record_event(tx, lead, now).await?);
    }
    write.tx.commit().await?;
    for dealership in &dealerships {
        store.announce_events(dealership).await;
    }
    if !requeued.is_empty() {
        store.announce(super::Signal::OutboxDue).await;
    }
    Ok(requeued.len() as u64)
}

/// The stored lead record (`leads.request`) of `lead_id`, for a CRM API's body.
pub async fn request_of(store: &super::Store, lead_id: &str) -> Result<Option<String>, StoreError> {
    let stored: Option<String> = sqlx::query_scalar("SELECT request FROM leads WHERE lead_id = $1")
        .bind(lead_id)
        .fetch_optional(store.pool())
        .await?;
    store.sealing().open_opt("leads.request", stored)
}

//! Resealing: bringing rows up to the current key (a rotation) or, for rows
//! from before sealing, giving them their keyed hashes. A batch is one
//! transaction, and each row's update is guarded by the values it read, so a
//! batch cut short (SIGKILL) leaves every row whole, sealed with the old key
//! or the new, both readable; the next pass picks up what is left.

use std::collections::BTreeMap;

use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};

use super::sealing::{Identity, Sealing};
use super::{Store, StoreError};

/// A table holding customer data: its key column and sealed columns.
struct Table {
    name: &'static str,
    key: &'static str,
    sealed: &'static [&'static str],
    /// Has `identity`, `contact_email` and `contact_phone` (and, for leads, `fingerprint`).
    identity: bool,
}

const TABLES: &[Table] = &[
    Table {
        name: "leads",
        key: "lead_id",
        sealed: &["request", "identity"],
        identity: true,
    },
    Table {
        name: "lead_deliveries",
        key: "lead_id",
        sealed: &["document"],
        identity: false,
    },
    Table {
        name: "lead_submissions",
        key: "submission_id",
        sealed: &["consent"],
        identity: false,
    },
    Table {
        name: "service_bookings",
        key: "booking_id",
        sealed: &["consent", "request", "identity"],
        identity: true,
    },
];

/// The table names, for metrics and `keys status`.
pub fn tables() -> impl Iterator<Item = &'static str> {
    TABLES.iter().map(|t| t.name)
}

/// Makes a lead's identity from its stored request (dealership, request
/// JSON), for leads stored before identities were kept. The store does not
/// read leads; the lead desk does.
pub type LegacyIdentity<'a> = &'a (dyn Fn(&str, &str) -> Option<Identity> + Sync);

/// One batch of one table: rows after `after` (by key) not sealed with the
/// current key, resealed. Returns how many were resealed and the last key
/// seen (`None` when the table has no more to do).
pub async fn batch(
    store: &Store,
    table: &str,
    after: &str,
    limit: u32,
    legacy: LegacyIdentity<'_>,
) -> Result<(u64, Option<String>), StoreError> {
    let Some(t) = TABLES.iter().find(|t| t.name == table) else {
        return Ok((0, None));
    };
    let sealing = store.sealing();
    let current = sealing.sealed_with();
    let extra = if t.name == "leads" {
        ", dealership"
    } else {
        ""
    };
    // Only fixed table and column names are spliced in; every value is bound.
    let sql = format!(
        "SELECT {key}, sealed_with, {cols}{extra} FROM {name}
         WHERE (sealed_with IS NULL OR sealed_with <> $1) AND {key} > $2
         ORDER BY {key} LIMIT $3",
        key = t.key,
        cols = t.sealed.join(", "),
        name = t.name,
    );
    let rows = sqlx::query(AssertSqlSafe(sql))
        .bind(current)
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(store.pool())
        .await?;
    let last = rows.last().map(|r| r.try_get::<String, _>(0)).transpose()?;
    let mut updates = Vec::with_capacity(rows.len());
    for row in &rows {
        updates.push(resealed(sealing, t, row, legacy)?);
    }
    let mut write = store.write().await?;
    let mut done = 0;
    for u in &updates {
        done += apply(&mut write.tx, t, u, current).await?;
    }
    write.tx.commit().await?;
    let more = rows.len() == limit as usize;
    Ok((done, last.filter(|_| more)))
}

/// A row's new values, and the old ones its update is guarded by.
struct Update {
    key: String,
    old_with: Option<String>,
    old: Vec<Option<String>>,
    new: Vec<Option<String>>,
    /// contact_email, contact_phone, and (leads) fingerprint.
    hashes: Option<(Option<String>, Option<String>, Option<String>)>,
}

fn resealed(
    sealing: &Sealing,
    t: &Table,
    row: &AnyRow,
    legacy: LegacyIdentity<'_>,
) -> Result<Update, StoreError> {
    let key: String = row.try_get(0)?;
    let old_with: Option<String> = row.try_get(1)?;
    let mut old = Vec::new();
    let mut plain = Vec::new();
    for (i, col) in t.sealed.iter().enumerate() {
        let column = format!("{}.{col}", t.name);
        let value: Option<String> = row.try_get(i + 2)?;
        // A dropped document ('') stays empty rather than sealing nothing.
        let opened = match value.as_deref() {
            Some("") | None => value.clone(),
            Some(v) => Some(sealing.open(&column, v)?),
        };
        old.push(value);
        plain.push(opened);
    }
    let mut hashes = None;
    if t.identity {
        let at = t.sealed.iter().position(|c| *c == "identity").unwrap_or(0);
        let identity =
            match &plain[at] {
                Some(json) => Some(serde_json::from_str::<Identity>(json).map_err(|e| {
                    StoreError::Encode(format!("{}.identity of {key}: {e}", t.name))
                })?),
                None if t.name == "leads" => {
                    let dealership: String = row.try_get(t.sealed.len() + 2)?;
                    plain[0].as_deref().and_then(|r| legacy(&dealership, r))
                }
                None => None,
            };
        if let Some(identity) = identity {
            let (email, phone) = sealing.contact_hashes(&identity);
            let fingerprint = identity.fingerprint.as_deref().map(|m| sealing.index(m));
            plain[at] = Some(
                serde_json::to_string(&identity).map_err(|e| StoreError::Encode(e.to_string()))?,
            );
            hashes = Some((email, phone, fingerprint));
        }
    }
    let mut new = Vec::new();
    for (col, value) in t.sealed.iter().zip(plain) {
        let column = format!("{}.{col}", t.name);
        new.push(match value.as_deref() {
            Some("") | None => value,
            Some(v) => Some(sealing.seal(&column, v)?),
        });
    }
    Ok(Update {
        key,
        old_with,
        old,
        new,
        hashes,
    })
}

async fn apply(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    t: &Table,
    u: &Update,
    current: &str,
) -> Result<u64, StoreError> {
    let n = t.sealed.len();
    let mut sets: Vec<String> = t
        .sealed
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} = ${}", i + 1))
        .collect();
    let mut next = n + 1;
    sets.push(format!("sealed_with = ${next}"));
    next += 1;
    if u.hashes.is_some() {
        sets.push(format!("contact_email = ${next}"));
        sets.push(format!("contact_phone = ${}", next + 1));
        next += 2;
        if t.name == "leads" {
            sets.push(format!("fingerprint = COALESCE(${next}, fingerprint)"));
            next += 1;
        }
    }
    let mut guards = vec![format!("{} = ${next}", t.key)];
    next += 1;
    guards.push(format!("sealed_with IS NOT DISTINCT FROM ${next}"));
    next += 1;
    for c in t.sealed {
        guards.push(format!("{c} IS NOT DISTINCT FROM ${next}"));
        next += 1;
    }
    // Only fixed column names and placeholders are spliced in.
    let sql = format!(
        "UPDATE {} SET {} WHERE {}",
        t.name,
        sets.join(", "),
        guards.join(" AND ")
    );
    let mut query = sqlx::query(AssertSqlSafe(sql));
    for v in &u.new {
        query = query.bind(v.clone());
    }
    query = query.bind(current);
    if let Some((email, phone, fingerprint)) = &u.hashes {
        query = query.bind(email.clone()).bind(phone.clone());
        if t.name == "leads" {
            query = query.bind(fingerprint.clone());
        }
    }
    query = query.bind(&u.key).bind(u.old_with.clone());
    for v in &u.old {
        query = query.bind(v.clone());
    }
    Ok(query.execute(&mut **tx).await?.rows_affected())
}

/// Rows per table by what sealed them: a key id, `plain` (no keys), or
/// `legacy` (from before sealing, not yet given its hashes).
pub async fn counts(store: &Store) -> Result<BTreeMap<String, BTreeMap<String, i64>>, StoreError> {
    let mut out = BTreeMap::new();
    for t in TABLES {
        // Only fixed table names are spliced in.
        let sql = format!(
            "SELECT COALESCE(sealed_with, 'legacy'), COUNT(*) FROM {} GROUP BY sealed_with",
            t.name
        );
        let rows: Vec<(String, i64)> = sqlx::query_as(AssertSqlSafe(sql))
            .fetch_all(store.pool())
            .await?;
        out.insert(t.name.to_owned(), rows.into_iter().collect());
    }
    Ok(out)
}

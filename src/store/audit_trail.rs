//! Reading the audit trail back (`dms-bridge audit`): tool calls and the
//! requests refused at the front door, filtered, oldest first.

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Row};

use super::{AuditRecord, Store, StoreError};
use crate::telemetry::door::Door;

/// Which rows to read. Every filter is optional; times are RFC 3339.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub dealership: Option<String>,
    pub principal: Option<String>,
    pub tool: Option<String>,
    pub door: Option<Door>,
    /// `ok`, an error code, or `refused` for every front-door refusal.
    pub outcome: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub limit: u32,
}

pub async fn read(store: &Store, f: &AuditFilter) -> Result<Vec<AuditRecord>, StoreError> {
    let mut clauses = Vec::new();
    let mut values: Vec<String> = Vec::new();
    let mut add = |clause: &str, value: &Option<String>| {
        if let Some(v) = value {
            values.push(v.clone());
            clauses.push(clause.replace('?', &format!("${}", values.len())));
        }
    };
    add("dealership = ?", &f.dealership);
    add("principal = ?", &f.principal);
    add("tool = ?", &f.tool);
    add("door = ?", &f.door.map(|d| d.as_str().to_owned()));
    let refused = f.outcome.as_deref() == Some("refused");
    add("outcome = ?", if refused { &None } else { &f.outcome });
    add("at >= ?", &f.since);
    add("at < ?", &f.until);
    if refused {
        clauses.push("outcome LIKE 'refused.%'".into());
    }
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", clauses.join(" AND "))
    };
    // Only fixed clauses and placeholders are spliced in; every value is bound.
    let sql = format!(
        "SELECT at, trace_id, door, principal, dealership, tool, adapter, outcome, latency_us,
             cache_hit, arg_shape
         FROM (SELECT * FROM audit_log{filter} ORDER BY at DESC, id DESC LIMIT {}) newest
         ORDER BY at, id",
        f.limit
    );
    let mut query = sqlx::query(AssertSqlSafe(sql));
    for v in &values {
        query = query.bind(v.as_str());
    }
    let rows = query.fetch_all(store.pool()).await?;
    rows.iter()
        .map(|r| {
            let shape: String = r.try_get("arg_shape")?;
            let at: String = r.try_get("at")?;
            Ok(AuditRecord {
                at: DateTime::parse_from_rfc3339(&at)
                    .map_err(|e| StoreError::Encode(format!("audit_log.at {at:?}: {e}")))?
                    .with_timezone(&Utc),
                trace_id: r.try_get("trace_id")?,
                door: r
                    .try_get::<Option<String>, _>("door")?
                    .as_deref()
                    .and_then(Door::from_name),
                principal: r.try_get("principal")?,
                dealership: r.try_get("dealership")?,
                tool: r.try_get("tool")?,
                adapter: r.try_get("adapter")?,
                outcome: r.try_get("outcome")?,
                latency_us: u64::try_from(r.try_get::<i64, _>("latency_us")?).unwrap_or_default(),
                cache_hit: r.try_get::<i64, _>("cache_hit")? != 0,
                arg_shape: serde_json::from_str(&shape).unwrap_or_default(),
            })
        })
        .collect()
}

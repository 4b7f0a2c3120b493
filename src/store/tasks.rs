//! SQL for MCP tasks (`migrations/*/0007`): tool calls that outlived their
//! inline wait, kept so that their creator can poll for the result. Every
//! statement that reads a task names its principal too: a task id alone
//! reaches nothing. Terminal states are final: every change is guarded by
//! `state = 'working'`, so a cancelled task stays cancelled when its call
//! answers later, and a late answer never overwrites a lapsed lease.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, StoreError};

/// Version of the stored `outcome` shape; bump it with a migration of old rows.
pub const TASK_SCHEMA_VERSION: i64 = 1;

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl TaskState {
    fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "working" => Self::Working,
            "completed" => Self::Completed,
            "failed" => Self::Failed,
            "cancelled" => Self::Cancelled,
            _ => return None,
        })
    }
}

/// How a task ended, as the bridge records it: the call's answer (the domain
/// payload or tool error, not a wire result), or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskOutcome {
    /// The call answered: its result (`ok`), or the tool error it answered with.
    Answered {
        ok: bool,
        body: Value,
        trace_id: String,
    },
    /// The call never answered: the process running it stopped, or it crashed.
    Interrupted { reason: String },
}

/// One task as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    pub task_id: String,
    pub principal: String,
    pub dealership: Option<String>,
    pub tool: String,
    pub state: TaskState,
    pub status_message: Option<String>,
    pub outcome: Option<TaskOutcome>,
    pub created_at: i64,
    pub updated_at: i64,
    pub lease_until: i64,
    pub expires_at: i64,
}

/// Creates a task (its state, message and times as `task` says; no
/// outcome yet); once this returns, `find` reaches it. Expired tasks go
/// first, so that tasks nobody polls do not pile up.
pub async fn create(store: &Store, task: &TaskRecord) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query("DELETE FROM tasks WHERE expires_at <= $1")
        .bind(task.created_at)
        .execute(store.pool())
        .await?;
    sqlx::query(
        "INSERT INTO tasks (task_id, schema_version, principal, dealership, tool, state,
             status_message, created_at, updated_at, lease_until, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&task.task_id)
    .bind(TASK_SCHEMA_VERSION)
    .bind(&task.principal)
    .bind(&task.dealership)
    .bind(&task.tool)
    .bind(task.state.as_str())
    .bind(&task.status_message)
    .bind(task.created_at)
    .bind(task.updated_at)
    .bind(task.lease_until)
    .bind(task.expires_at)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// `principal`'s task `task_id`, unless it expired. A working task whose
/// lease lapsed is marked failed (`interrupted`) on the way.
pub async fn find(
    store: &Store,
    task_id: &str,
    principal: &str,
    now: i64,
    interrupted: &TaskOutcome,
) -> Result<Option<TaskRecord>, StoreError> {
    let Some(task) = select(store, task_id, principal, now).await? else {
        return Ok(None);
    };
    if task.state != TaskState::Working || task.lease_until >= now {
        return Ok(Some(task));
    }
    {
        let _turn = store.write_turn().await;
        sqlx::query(
            "UPDATE tasks SET state = 'failed', outcome = $3, updated_at = $4
             WHERE task_id = $1 AND principal = $2 AND state = 'working' AND lease_until < $4",
        )
        .bind(task_id)
        .bind(principal)
        .bind(outcome_json(interrupted)?)
        .bind(now)
        .execute(store.pool())
        .await?;
    }
    select(store, task_id, principal, now).await
}

async fn select(
    store: &Store,
    task_id: &str,
    principal: &str,
    now: i64,
) -> Result<Option<TaskRecord>, StoreError> {
    let row = sqlx::query(
        "SELECT task_id, principal, dealership, tool, state, status_message, outcome,
                created_at, updated_at, lease_until, expires_at, schema_version
         FROM tasks WHERE task_id = $1 AND principal = $2 AND expires_at > $3",
    )
    .bind(task_id)
    .bind(principal)
    .bind(now)
    .fetch_optional(store.pool())
    .await?;
    row.map(|r| record(&r)).transpose()
}

fn record(row: &AnyRow) -> Result<TaskRecord, StoreError> {
    let version: i64 = row.try_get("schema_version")?;
    if version != TASK_SCHEMA_VERSION {
        return Err(corrupt(format!("task schema version {version}")));
    }
    let state: String = row.try_get("state")?;
    let outcome: Option<String> = row.try_get("outcome")?;
    let outcome = outcome
        .map(|o| serde_json::from_str(&o))
        .transpose()
        .map_err(|e| corrupt(format!("task outcome: {e}")))?;
    Ok(TaskRecord {
        task_id: row.try_get("task_id")?,
        principal: row.try_get("principal")?,
        dealership: row.try_get("dealership")?,
        tool: row.try_get("tool")?,
        state: TaskState::parse(&state).ok_or_else(|| corrupt(format!("task state {state:?}")))?,
        status_message: row.try_get("status_message")?,
        outcome,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        lease_until: row.try_get("lease_until")?,
        expires_at: row.try_get("expires_at")?,
    })
}

fn corrupt(what: String) -> StoreError {
    StoreError::Query(sqlx::Error::Decode(what.into()))
}

fn outcome_json(outcome: &TaskOutcome) -> Result<String, StoreError> {
    serde_json::to_string(outcome).map_err(|e| StoreError::Query(sqlx::Error::Encode(e.into())))
}

/// Extends a working task's lease: its call is still running here.
pub async fn renew(store: &Store, task_id: &str, lease_until: i64) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query("UPDATE tasks SET lease_until = $2 WHERE task_id = $1 AND state = 'working'")
        .bind(task_id)
        .bind(lease_until)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// What a working task is doing now (the latest progress report).
pub async fn set_message(
    store: &Store,
    task_id: &str,
    message: &str,
    now: i64,
) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query(
        "UPDATE tasks SET status_message = $2, updated_at = $3
         WHERE task_id = $1 AND state = 'working'",
    )
    .bind(task_id)
    .bind(message)
    .bind(now)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Ends a working task with `state` (completed or failed) and its outcome.
/// `false` when it was no longer working (cancelled, or its lease lapsed).
pub async fn finish(
    store: &Store,
    task_id: &str,
    state: TaskState,
    message: Option<&str>,
    outcome: &TaskOutcome,
    now: i64,
) -> Result<bool, StoreError> {
    let json = outcome_json(outcome)?;
    let _turn = store.write_turn().await;
    let done = sqlx::query(
        "UPDATE tasks SET state = $2, status_message = $3, outcome = $4, updated_at = $5
         WHERE task_id = $1 AND state = 'working'",
    )
    .bind(task_id)
    .bind(state.as_str())
    .bind(message)
    .bind(json)
    .bind(now)
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Cancels `principal`'s working task. `false` when there is no such working task.
pub async fn cancel(
    store: &Store,
    task_id: &str,
    principal: &str,
    message: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let _turn = store.write_turn().await;
    let done = sqlx::query(
        "UPDATE tasks SET state = 'cancelled', status_message = $3, updated_at = $4
         WHERE task_id = $1 AND principal = $2 AND state = 'working' AND expires_at > $4",
    )
    .bind(task_id)
    .bind(principal)
    .bind(message)
    .bind(now)
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected() == 1)
}

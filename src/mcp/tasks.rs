//! The Tasks extension on the wire (`io.modelcontextprotocol/tasks`,
//! SEP-2663): stored tasks as `CreateTaskResult` and `tasks/get` answers.
//! Which calls become tasks, and who may see them, is the gateway's business.

use chrono::{DateTime, SecondsFormat, Utc};
use rmcp::ErrorData as McpError;
use rmcp::model::{DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::{Value, json};

use crate::gateway::{TaskError, TaskView};
use crate::store::tasks::{TaskOutcome, TaskState};

/// The task's base fields, as `CreateTaskResult` and `tasks/get` carry them.
pub fn task_of(view: &TaskView) -> Task {
    let r = &view.record;
    let status = match r.state {
        TaskState::Working => TaskStatus::Working,
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Failed => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    };
    let mut task = Task::new(
        r.task_id.clone(),
        status,
        timestamp(r.created_at),
        timestamp(r.updated_at),
    )
    .with_ttl_ms(u64::try_from(r.expires_at - r.created_at).unwrap_or(0))
    .with_poll_interval_ms(u64::try_from(view.poll_interval.as_millis()).unwrap_or(u64::MAX));
    if let Some(message) = &r.status_message {
        task = task.with_status_message(message.clone());
    }
    task
}

/// The task with its answer, for `tasks/get`.
pub fn detailed(view: &TaskView) -> DetailedTask {
    let task = task_of(view);
    let payload = match (view.record.state, view.record.outcome.clone()) {
        (TaskState::Working, _) => TaskPayload::Working,
        (TaskState::Cancelled, _) => TaskPayload::Cancelled,
        (_, Some(TaskOutcome::Answered { ok, body, trace_id })) => TaskPayload::Completed {
            result: object(super::stored_result(ok, body, trace_id)),
        },
        (_, Some(TaskOutcome::Interrupted { reason })) => TaskPayload::Failed {
            error: object(json!({ "code": -32603, "message": reason })),
        },
        // A finished task always has an outcome; without one there is nothing true to say but this.
        (_, None) => TaskPayload::Failed {
            error: object(json!({ "code": -32603, "message": "The task's answer was lost." })),
        },
    };
    DetailedTask::new(task, payload)
}

fn object(value: impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

fn timestamp(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The JSON-RPC error for a task that cannot be shown: unknown, expired and
/// someone else's answer alike (-32602, as the extension asks).
pub fn task_error(error: TaskError) -> McpError {
    match error {
        TaskError::NotFound => {
            McpError::invalid_params("Failed to retrieve task: Task not found", None)
        }
        TaskError::Store(e) => {
            tracing::error!(error = %e, "A task could not be read or changed.");
            McpError::internal_error("The bridge hit an unexpected error; try again later.", None)
        }
    }
}

//! Slow reads as MCP tasks. A call that may become a task (a read that
//! reaches into the dealer's systems, from a signed-in caller whose client
//! takes tasks) runs on its own; if it answers within `tasks.inline_wait` the
//! answer goes back inline, as for any call. Otherwise the task is stored
//! (bound to the caller's principal and the dealership), the client gets its
//! id, and the call goes on in the background under `tasks.timeout`, renewing
//! its claim on the task, until its answer is stored for `tasks/get`.
//!
//! The call itself goes through the same pipeline as any other (scoping,
//! quotas, cache, audit); only its deadline is longer. Writes never become
//! tasks: a write whose client went away must still end in a known state,
//! and the write step's leases assume the ordinary deadline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use rmcp::model::JsonObject;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use super::{CallError, CallOutcome, Caller, Gateway};
use crate::config::{TasksConfig, ToolClass};
use crate::contract::{Principal, ToolError};
use crate::store::tasks::{self as stored, TaskOutcome, TaskRecord, TaskState};
use crate::store::{Store, StoreError};
use crate::telemetry::client_log::{LogSink, Notice};
use crate::telemetry::progress::ProgressSink;
use crate::tools::ToolId;

/// Why a task cannot be shown or changed.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// No task by that id for this caller: unknown, expired, or someone
    /// else's (the same answer for each, so ids cannot be probed).
    #[error("task not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a call that may become a task answers.
#[derive(Debug)]
pub enum Answer {
    /// The call's own answer, inline.
    Now(CallOutcome),
    /// A task to poll.
    Task(TaskView),
}

/// A task as a caller sees it.
#[derive(Debug, Clone)]
pub struct TaskView {
    pub record: TaskRecord,
    pub poll_interval: Duration,
}

/// The tasks this process runs, and their limits.
pub struct TaskDesk {
    config: TasksConfig,
    slots: Arc<Semaphore>,
    /// Cancellation of the calls running here, by task id.
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl TaskDesk {
    pub fn new(config: TasksConfig) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(config.max_running)),
            config,
            running: Mutex::default(),
        }
    }

    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    fn track(&self, task_id: &str, cancel: CancellationToken) {
        if let Ok(mut running) = self.running.lock() {
            running.insert(task_id.to_owned(), cancel);
        }
    }

    fn untrack(&self, task_id: &str) {
        if let Ok(mut running) = self.running.lock() {
            running.remove(task_id);
        }
    }

    fn cancel_here(&self, task_id: &str) {
        let token = self
            .running
            .lock()
            .ok()
            .and_then(|running| running.get(task_id).cloned());
        if let Some(token) = token {
            token.cancel();
        }
    }
}

fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// What a task whose call never answered reads as.
fn interrupted() -> TaskOutcome {
    TaskOutcome::Interrupted {
        reason: "The bridge stopped running this call before it answered; call the tool again."
            .into(),
    }
}

impl Gateway {
    pub fn tasks_enabled(&self) -> bool {
        self.inner.tasks.enabled()
    }

    /// Whether this call may become a task (when the client takes tasks): a
    /// read that reaches into the dealer's systems, by a caller of its own.
    pub fn may_become_task(&self, caller: &Caller, name: &str) -> bool {
        ToolId::from_name(name).is_some_and(|tool| self.eligible(caller, tool))
    }

    fn eligible(&self, caller: &Caller, tool: ToolId) -> bool {
        self.inner.tasks.enabled()
            && !caller.principal.anonymous
            && tool.spec().open_world
            && tool.class() == ToolClass::Read
    }

    /// Runs a call that the client lets become a task: inline if it is quick
    /// or may not become one, else as a task.
    pub async fn call_or_defer(
        &self,
        mut caller: Caller,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<Answer, CallError> {
        let tool = ToolId::from_name(name).ok_or(CallError::UnknownTool)?;
        let desk = &self.inner.tasks;
        let slot = self
            .eligible(&caller, tool)
            .then(|| desk.slots.clone().try_acquire_owned().ok())
            .flatten();
        let Some(slot) = slot else {
            return self
                .call_tool(&caller, name, arguments)
                .await
                .map(Answer::Now);
        };
        let dealership = arguments
            .as_ref()
            .and_then(|a| a.get("dealership_id"))
            .and_then(|d| d.as_str())
            .filter(|id| self.dealership(id).is_some() && caller.principal.may_use(id))
            .map(str::to_owned);
        let progress = Arc::new(TaskProgress::new(caller.progress.take()));
        caller.progress = Some(progress.clone());
        caller.log = caller.log.take().map(|inline| {
            Arc::new(TaskLog {
                inline,
                progress: progress.clone(),
            }) as Arc<dyn LogSink>
        });
        // Aborted if the request goes away before the call answers or is handed to a task.
        let mut call =
            AbortOnDropHandle::new(self.spawn_call(caller.clone(), name, arguments, slot));
        if let Ok(joined) = tokio::time::timeout(desk.config.inline_wait, &mut call).await {
            return Ok(Answer::Now(joined_outcome(joined, &caller)));
        }
        match self.defer(&caller, tool, dealership, &progress).await {
            Ok(view) => {
                self.follow(view.record.task_id.clone(), call, progress);
                Ok(Answer::Task(view))
            }
            Err(e) => {
                // Without a stored task the client could never get the answer: keep waiting.
                tracing::error!(error = %e, "Could not store a task; answering inline.");
                Ok(Answer::Now(joined_outcome(call.await, &caller)))
            }
        }
    }

    fn spawn_call(
        &self,
        caller: Caller,
        name: &str,
        arguments: Option<JsonObject>,
        slot: OwnedSemaphorePermit,
    ) -> JoinHandle<Result<CallOutcome, CallError>> {
        let gateway = self.clone();
        let name = name.to_owned();
        let timeout = self.inner.tasks.config.timeout;
        tokio::spawn(async move {
            let outcome = gateway
                .call_tool_within(&caller, &name, arguments, timeout)
                .await;
            drop(slot);
            outcome
        })
    }

    /// Stores the task for a call that is still running.
    async fn defer(
        &self,
        caller: &Caller,
        tool: ToolId,
        dealership: Option<String>,
        progress: &TaskProgress,
    ) -> Result<TaskView, StoreError> {
        let config = &self.inner.tasks.config;
        let now = now_ms();
        let record = TaskRecord {
            task_id: uuid::Uuid::new_v4().to_string(),
            principal: caller.principal.name.to_string(),
            dealership,
            tool: tool.name().to_owned(),
            state: TaskState::Working,
            status_message: Some(
                progress
                    .latest()
                    .unwrap_or_else(|| "Waiting for the dealer's system.".to_owned()),
            ),
            outcome: None,
            created_at: now,
            updated_at: now,
            lease_until: now + ms(config.lease()),
            expires_at: now + ms(config.ttl),
        };
        // Durable once this returns: a tasks/get for the id finds it.
        stored::create(self.store(), &record).await?;
        tracing::info!(
            task_id = record.task_id,
            tool = record.tool,
            principal = record.principal,
            "The call became a task."
        );
        Ok(TaskView {
            record,
            poll_interval: config.poll_interval,
        })
    }

    /// Waits for a task's call in the background, keeping its claim fresh,
    /// and stores its answer.
    fn follow(
        &self,
        task_id: String,
        mut call: AbortOnDropHandle<Result<CallOutcome, CallError>>,
        progress: Arc<TaskProgress>,
    ) {
        let gateway = self.clone();
        let cancel = CancellationToken::new();
        self.inner.tasks.track(&task_id, cancel.clone());
        progress.persist_to(self.store().clone(), task_id.clone());
        tokio::spawn(async move {
            let store = gateway.store();
            let config = &gateway.inner.tasks.config;
            let mut beat = tokio::time::interval(config.heartbeat);
            beat.tick().await;
            let joined = loop {
                tokio::select! {
                    joined = &mut call => break Some(joined),
                    () = cancel.cancelled() => {
                        call.abort();
                        break None;
                    }
                    _ = beat.tick() => {
                        if let Err(e) = stored::renew(store, &task_id, now_ms() + ms(config.lease())).await {
                            tracing::warn!(task_id, error = %e, "Could not renew a task's claim.");
                        }
                    }
                }
            };
            gateway.inner.tasks.untrack(&task_id);
            // Cancelled: tasks/cancel has already stored that.
            let Some(joined) = joined else { return };
            let (state, message, outcome) = match joined {
                Ok(Ok(outcome)) => {
                    let ok = outcome.result.is_ok();
                    let body = match outcome.result {
                        Ok(payload) => payload.value().clone(),
                        Err(error) => error.to_json(),
                    };
                    let message = if ok {
                        "The call answered."
                    } else {
                        "The call answered with an error."
                    };
                    let outcome = TaskOutcome::Answered {
                        ok,
                        body,
                        trace_id: outcome.trace_id,
                    };
                    (TaskState::Completed, message, outcome)
                }
                Ok(Err(CallError::UnknownTool)) | Err(_) => {
                    tracing::error!(task_id, "A task's call stopped without an answer.");
                    (
                        TaskState::Failed,
                        "The call stopped without an answer.",
                        interrupted(),
                    )
                }
            };
            if let Err(e) =
                stored::finish(store, &task_id, state, Some(message), &outcome, now_ms()).await
            {
                tracing::error!(task_id, error = %e, "Could not store a task's answer.");
            }
        });
    }

    /// `principal`'s task, if it still may see it.
    pub async fn task(&self, principal: &Principal, task_id: &str) -> Result<TaskView, TaskError> {
        let record = stored::find(
            self.store(),
            task_id,
            &principal.name,
            now_ms(),
            &interrupted(),
        )
        .await?
        .ok_or(TaskError::NotFound)?;
        // Access can shrink after the task was made (a config reload): the
        // task goes with it, as the call would now be refused.
        let tool = ToolId::from_name(&record.tool);
        let allowed = tool.is_some_and(|t| t.scope().is_none_or(|s| principal.has_scope(s)))
            && record
                .dealership
                .as_deref()
                .is_none_or(|d| principal.may_use(d));
        if !allowed {
            return Err(TaskError::NotFound);
        }
        Ok(TaskView {
            record,
            poll_interval: self.inner.tasks.config.poll_interval,
        })
    }

    /// Cancels `principal`'s task if it is still working; a finished one
    /// stays as it is (cancellation is cooperative).
    pub async fn cancel_task(&self, principal: &Principal, task_id: &str) -> Result<(), TaskError> {
        self.task(principal, task_id).await?;
        let cancelled = stored::cancel(
            self.store(),
            task_id,
            &principal.name,
            "Cancelled by the client.",
            now_ms(),
        )
        .await?;
        if cancelled {
            self.inner.tasks.cancel_here(task_id);
        }
        Ok(())
    }
}

/// The answer of a call that ran on its own task.
fn joined_outcome(
    joined: Result<Result<CallOutcome, CallError>, tokio::task::JoinError>,
    caller: &Caller,
) -> CallOutcome {
    match joined {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(CallError::UnknownTool)) | Err(_) => {
            tracing::error!("A call stopped without an answer.");
            CallOutcome {
                result: Err(ToolError::internal()),
                cache: None,
                trace_id: caller.trace.trace_id.clone(),
            }
        }
    }
}

/// Progress of a call that may become a task: reports go to the client's
/// progress notifications while it waits inline; once the call is a task,
/// the latest report becomes the task's status message (the Tasks extension
/// has no progress notifications).
#[derive(Debug)]
struct TaskProgress {
    inline: Option<Arc<dyn ProgressSink>>,
    latest: watch::Sender<Option<String>>,
    deferred: std::sync::atomic::AtomicBool,
}

impl TaskProgress {
    fn new(inline: Option<Arc<dyn ProgressSink>>) -> Self {
        Self {
            inline,
            latest: watch::Sender::new(None),
            deferred: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn latest(&self) -> Option<String> {
        self.latest.borrow().clone()
    }

    /// From now on, writes each new report to the task (coalescing bursts).
    fn persist_to(&self, store: Store, task_id: String) {
        self.deferred
            .store(true, std::sync::atomic::Ordering::Release);
        let mut reports = self.latest.subscribe();
        reports.mark_unchanged();
        tokio::spawn(async move {
            // Ends when the call ends and drops its progress.
            while reports.changed().await.is_ok() {
                let Some(message) = reports.borrow_and_update().clone() else {
                    continue;
                };
                if let Err(e) = stored::set_message(&store, &task_id, &message, now_ms()).await {
                    tracing::debug!(task_id, error = %e, "Could not store a task's progress.");
                }
            }
        });
    }
}

/// Log messages of a call that may become a task: they go to the client
/// while it waits inline; a task has no notifications, so after that they stop.
#[derive(Debug)]
struct TaskLog {
    inline: Arc<dyn LogSink>,
    progress: Arc<TaskProgress>,
}

impl LogSink for TaskLog {
    fn log(&self, notice: Notice) {
        if !self
            .progress
            .deferred
            .load(std::sync::atomic::Ordering::Acquire)
        {
            self.inline.log(notice);
        }
    }
}

impl ProgressSink for TaskProgress {
    fn report(&self, progress: f64, total: Option<f64>, message: String) {
        if !self.deferred.load(std::sync::atomic::Ordering::Acquire)
            && let Some(inline) = &self.inline
        {
            inline.report(progress, total, message.clone());
        }
        self.latest.send_replace(Some(message));
    }
}

//! `[tasks]`: slow reads as MCP tasks (the `io.modelcontextprotocol/tasks`
//! extension). A read that reaches into the dealer's systems and has not
//! answered within `inline_wait` is handed to the client as a task to poll,
//! if the client said it takes tasks; everything else answers inline.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Config, ConfigError};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TasksConfig {
    /// Advertise the tasks extension and hand slow reads out as tasks.
    pub enabled: bool,
    /// A call that answers within this is answered inline, task or not.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub inline_wait: Duration,
    /// Deadline of a call that may become a task (instead of
    /// `limits.call_timeout`): real repair-order lookups take minutes.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    /// How long a task and its result are kept, from its creation.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub ttl: Duration,
    /// Polling interval suggested to clients.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub poll_interval: Duration,
    /// How often the process running a task renews its claim on it. A task
    /// whose claim is three of these old belongs to a process that stopped:
    /// it reads as failed.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub heartbeat: Duration,
    /// Calls that may become tasks at once, in this process. Past it, calls
    /// answer inline under `limits.call_timeout`, so a flood of slow calls
    /// cannot pile up background work.
    pub max_running: usize,
}

impl Default for TasksConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            inline_wait: Duration::from_secs(2),
            timeout: Duration::from_secs(10 * 60),
            ttl: Duration::from_secs(60 * 60),
            poll_interval: Duration::from_secs(1),
            heartbeat: Duration::from_secs(10),
            max_running: 256,
        }
    }
}

impl TasksConfig {
    /// How long a claim holds without renewal.
    pub fn lease(&self) -> Duration {
        self.heartbeat.saturating_mul(3)
    }
}

pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    let t = &config.tasks;
    super::rules::require_durations(
        "tasks",
        &[
            ("inline_wait", t.inline_wait),
            ("timeout", t.timeout),
            ("ttl", t.ttl),
            ("poll_interval", t.poll_interval),
            ("heartbeat", t.heartbeat),
        ],
        errors,
    );
    if t.timeout <= t.inline_wait {
        errors.push(ConfigError::new(
            "tasks.timeout",
            "must be longer than tasks.inline_wait",
        ));
    }
    if t.ttl < t.timeout {
        errors.push(ConfigError::new(
            "tasks.ttl",
            "must be at least tasks.timeout, or a task could expire before its call answers",
        ));
    }
    if t.max_running == 0 {
        errors.push(ConfigError::new(
            "tasks.max_running",
            "must be at least 1 (set tasks.enabled = false to serve no tasks)",
        ));
    }
}

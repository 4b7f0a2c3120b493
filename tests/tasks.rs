#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Slow reads as MCP tasks (the `io.modelcontextprotocol/tasks` extension),
//! through rmcp's own client speaking 2026-07-28 with per-request
//! capabilities, against a CDK Drive-shaped DMS faked with wiremock whose
//! long operation takes longer than the bridge's inline wait.

use crate::common;

use std::time::Duration;

use common::config::{BridgeConfig, Dealership, Token, Upstream, quoted};
use common::process::{free_addr, start_bridge};
use common::{fixture, mount_token, with_config};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    CreateTaskResult, ErrorCode, GetTaskParams, TaskPayload, TaskStatus,
};
use rmcp::service::{RunningService, ServiceError};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const DRIVE: &str = "/cdk/drive/servicerepairorder/v1";

type Client = RunningService<RoleClient, ClientConfig>;

/// A 2026-07-28 client, declaring the Tasks extension on every request when `tasks`.
async fn client(url: &str, token: &str, tasks: bool) -> Client {
    let capabilities = if tasks {
        ClientCapabilities::builder().enable_tasks().build()
    } else {
        ClientCapabilities::default()
    };
    common::modern_client(url, token, capabilities).await
}

/// A CDK upstream whose open-orders query needs one status check, answered
/// after `status_delay`.
async fn drive(status_delay: Duration) -> MockServer {
    let server = MockServer::start().await;
    mount_token(&server).await;
    let operation = |status: &str| {
        let mut body: Value =
            serde_json::from_str(&fixture("cdk/repair-orders/status-received.json")).unwrap();
        body["operationId"] = json!("op-open");
        body["status"] = json!(status);
        body["checkStatusAfterSeconds"] = json!(0);
        ResponseTemplate::new(200).set_body_json(body)
    };
    Mock::given(method("GET"))
        .and(path(format!("{DRIVE}/open")))
        .respond_with(operation("received"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{DRIVE}/long-operations/op-open/status")))
        .respond_with(operation("complete").set_delay(status_delay))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{DRIVE}/long-operations/op-open/result")))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("cdk/repair-orders/result-open.json"),
            "application/json",
        ))
        .mount(&server)
        .await;
    server
}

/// Dealership `acme` routed to `upstream`; tokens `advisor` and `other-advisor`
/// with the same grants; `tasks` as the `[tasks]` section's lines.
fn config(upstream: &str, tasks: &str) -> BridgeConfig {
    let acme = Dealership::new(
        "acme",
        "Acme Motors",
        "America/Chicago",
        ["1 Main St", "Austin", "TX", "78701"],
    );
    // The DMS's slow status answers stay inside every timeout: only the
    // task's life is under test.
    let mut config = BridgeConfig::new()
        .call_timeout("60s")
        .no_cache()
        .dealership(acme.route("repair_orders", "cdk"))
        .upstream(
            "cdk",
            Upstream::cdk(upstream)
                .set("profile", quoted("cdk-fortellis"))
                .timeout("30s"),
        );
    for (name, secret) in [
        ("advisor", "advisor-token"),
        ("other-advisor", "other-token"),
    ] {
        config = config.token(Token::new(name, secret, &["acme"], &["amcp:service:read"]));
    }
    for line in tasks.lines() {
        config = config.section("tasks", line);
    }
    config
}

fn list_open() -> CallToolRequestParams {
    let args = json!({ "dealership_id": "acme", "from": "2026-11-01", "to": "2026-11-20", "status": ["open"] });
    CallToolRequestParams::new("service_list_repair_orders")
        .with_arguments(args.as_object().unwrap().clone())
}

async fn created(client: &Client) -> CreateTaskResult {
    match client.call_tool_once(list_open()).await.unwrap() {
        CallToolResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Polls until the task leaves `working` (bounded), returning what `tasks/get` said last.
async fn settled(client: &Client, task_id: &str) -> rmcp::model::GetTaskResult {
    let deadline = std::time::Instant::now() + PATIENCE;
    while std::time::Instant::now() < deadline {
        let got = client.get_task(GetTaskParams::new(task_id)).await.unwrap();
        if got.task.status() != TaskStatus::Working {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("task {task_id} still working after {PATIENCE:?}");
}

/// Polls until the task's status message starts with `wanted` (bounded): the
/// adapter reports progress once the DMS has taken the query, which on a
/// slow machine may come after the task was created.
async fn message_once_there(client: &Client, task_id: &str, wanted: &str) {
    let deadline = std::time::Instant::now() + PATIENCE;
    let mut message = String::new();
    while std::time::Instant::now() < deadline {
        let got = client.get_task(GetTaskParams::new(task_id)).await.unwrap();
        message = got.task.task.status_message.unwrap_or_default();
        if message.starts_with(wanted) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {task_id} said {message:?}, never {wanted:?}");
}

/// How long a test waits for a task to move on.
const PATIENCE: Duration = Duration::from_secs(30);

fn rpc_error(result: Result<impl std::fmt::Debug, ServiceError>) -> (ErrorCode, String) {
    match result {
        Err(ServiceError::McpError(e)) => (e.code, e.message.to_string()),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn completed_structured(got: &rmcp::model::GetTaskResult) -> Value {
    match &got.task.payload {
        TaskPayload::Completed { result } => {
            assert_eq!(result.get("isError"), Some(&json!(false)), "{result:?}");
            result["structuredContent"].clone()
        }
        other => panic!("expected a completed task, got {other:?}"),
    }
}

#[tokio::test]
async fn a_slow_lookup_becomes_a_task_that_only_its_creator_can_poll() {
    let server = drive(Duration::from_secs(5)).await;
    let bridge = with_config(
        &config(
            &server.uri(),
            "inline_wait = \"200ms\"\npoll_interval = \"250ms\"",
        )
        .render(),
    )
    .await;
    let advisor = client(&bridge.url, "advisor-token", true).await;
    let other = client(&bridge.url, "other-token", true).await;

    let task = created(&advisor).await;
    assert_eq!(task.task.status, TaskStatus::Working);
    assert_eq!(task.task.poll_interval_ms, Some(250));
    assert_eq!(task.task.ttl_ms, Some(3_600_000));
    assert!(task.task.task_id.len() >= 32, "{}", task.task.task_id);
    // The adapter's progress report becomes the status message.
    let id = task.task.task_id.clone();
    message_once_there(&advisor, &id, "Waiting for the DMS").await;

    // Another principal with the very same grants learns nothing, not even
    // that the task exists: the answer is the unknown-id answer.
    let theirs = rpc_error(other.get_task(GetTaskParams::new(&id)).await);
    let unknown = rpc_error(
        other
            .get_task(GetTaskParams::new("6f0c1d9e-0000-4000-8000-000000000000"))
            .await,
    );
    assert_eq!(theirs, unknown);
    assert_eq!(theirs.0, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        rpc_error(other.cancel_task(CancelTaskParams::new(&id)).await),
        unknown
    );

    let got = settled(&advisor, &id).await;
    assert_eq!(got.task.status(), TaskStatus::Completed);
    let from_task = completed_structured(&got);

    // The same call answered inline (a client without tasks) gives the same result.
    let inline = client(&bridge.url, "advisor-token", false).await;
    let direct = match inline.call_tool_once(list_open()).await.unwrap() {
        CallToolResponse::Complete(result) => result.structured_content.unwrap(),
        other => panic!("a client without the extension got {other:?}"),
    };
    assert_eq!(from_task, direct);
    assert!(!from_task["items"].as_array().unwrap().is_empty());
    // Cancelling a finished task changes nothing.
    advisor
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    let again = advisor.get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(again.task.status(), TaskStatus::Completed);
}

#[tokio::test]
async fn quick_calls_and_clients_without_the_extension_answer_inline() {
    let server = drive(Duration::ZERO).await;
    let bridge = with_config(&config(&server.uri(), "inline_wait = \"3s\"").render()).await;
    let with_tasks = client(&bridge.url, "advisor-token", true).await;
    assert!(matches!(
        with_tasks.call_tool_once(list_open()).await.unwrap(),
        CallToolResponse::Complete(_)
    ));

    let slow = drive(Duration::from_millis(800)).await;
    let bridge = with_config(&config(&slow.uri(), "inline_wait = \"100ms\"").render()).await;
    let without = client(&bridge.url, "advisor-token", false).await;
    match without.call_tool_once(list_open()).await.unwrap() {
        CallToolResponse::Complete(result) => assert_eq!(result.is_error, Some(false)),
        other => panic!("a client without the extension got {other:?}"),
    }
    // Task methods need the extension declared on the request.
    let (code, _) = rpc_error(without.get_task(GetTaskParams::new("anything")).await);
    assert_eq!(code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
}

#[tokio::test]
async fn tasks_disabled_in_config_are_not_advertised_and_never_made() {
    let server = drive(Duration::from_millis(800)).await;
    let bridge =
        with_config(&config(&server.uri(), "enabled = false\ninline_wait = \"100ms\"").render())
            .await;
    let advisor = client(&bridge.url, "advisor-token", true).await;
    let info = advisor.peer_info().unwrap();
    assert!(!info.capabilities.supports_tasks());
    assert!(matches!(
        advisor.call_tool_once(list_open()).await.unwrap(),
        CallToolResponse::Complete(_)
    ));

    let enabled = with_config(&config(&server.uri(), "").render()).await;
    let advisor = client(&enabled.url, "advisor-token", true).await;
    assert!(advisor.peer_info().unwrap().capabilities.supports_tasks());
}

#[tokio::test]
async fn cancelling_a_task_stops_its_upstream_work_and_it_stays_cancelled() {
    // The status check answers long after the cancel on any machine.
    let server = drive(Duration::from_secs(5)).await;
    let bridge = with_config(&config(&server.uri(), "inline_wait = \"200ms\"").render()).await;
    let advisor = client(&bridge.url, "advisor-token", true).await;
    let id = created(&advisor).await.task.task_id;

    advisor
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    let got = advisor.get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::Cancelled);
    // Past the moment the status check would have answered: the lookup was
    // stopped (the result was never fetched) and the task is still cancelled.
    tokio::time::sleep(Duration::from_millis(5500)).await;
    let results = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path().ends_with("/result"))
        .count();
    assert_eq!(results, 0);
    let got = advisor.get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::Cancelled);
}

#[tokio::test]
async fn a_task_whose_bridge_was_killed_reads_as_failed_after_a_restart() {
    let server = drive(Duration::from_secs(30)).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bridge.db");
    let addr = free_addr();
    let toml = config(
        &server.uri(),
        "inline_wait = \"200ms\"\nheartbeat = \"100ms\"",
    )
    .section("server", &format!("listen = \"{addr}\""))
    .section("store", &format!("url = \"sqlite://{}\"", db.display()))
    .render();
    let file = dir.path().join("bridge.toml");
    std::fs::write(&file, toml).unwrap();
    let url = format!("http://{addr}/mcp");

    let mut bridge = start_bridge(&file, addr).await;
    let id = {
        let advisor = client(&url, "advisor-token", true).await;
        created(&advisor).await.task.task_id
    };
    bridge.start_kill().unwrap();
    bridge.wait().await.unwrap();

    let _restarted = start_bridge(&file, addr).await;
    let advisor = client(&url, "advisor-token", true).await;
    // The dead process's claim lapses after three heartbeats.
    let got = settled(&advisor, &id).await;
    assert_eq!(got.task.status(), TaskStatus::Failed);
    match &got.task.payload {
        TaskPayload::Failed { error } => {
            assert_eq!(error["code"], json!(-32603));
            assert!(
                error["message"]
                    .as_str()
                    .unwrap()
                    .contains("call the tool again")
            );
        }
        other => panic!("expected a failed task, got {other:?}"),
    }
    // Still only for its creator.
    let other = client(&url, "other-token", true).await;
    let (code, _) = rpc_error(other.get_task(GetTaskParams::new(&id)).await);
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
}

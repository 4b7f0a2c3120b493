//! The same engine over stdio, as Claude Desktop runs it: the real binary as a
//! child process, the caller's token from DMS_BRIDGE_TOKEN, stdout reserved
//! for MCP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{err, ok};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use tokio::process::Command;

fn bridge(token: Option<&str>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dms-bridge"));
    cmd.args(["demo", "--stdio", "--listen", "127.0.0.1:0"]);
    cmd.env("DMS_BRIDGE_LOG", "warn");
    match token {
        Some(t) => cmd.env("DMS_BRIDGE_TOKEN", t),
        None => cmd.env_remove("DMS_BRIDGE_TOKEN"),
    };
    cmd
}

fn args(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().unwrap().clone()
}

#[tokio::test]
async fn stdio_serves_the_token_holder() {
    let client =
        ().serve(TokioChildProcess::new(bridge(Some("demo-token-cdk"))).unwrap())
            .await
            .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 16, "the 15 domain tools and events_list");
    let page = client
        .call_tool(
            CallToolRequestParams::new("inventory.search")
                .with_arguments(args(json!({ "dealership_id": "demo-cdk", "limit": 3 }))),
        )
        .await
        .unwrap();
    assert_eq!(ok(&page)["items"].as_array().unwrap().len(), 3);
    let other = client
        .call_tool(
            CallToolRequestParams::new("inventory.search")
                .with_arguments(args(json!({ "dealership_id": "demo-feed" }))),
        )
        .await
        .unwrap();
    assert_eq!(err(&other)["code"], "auth.forbidden");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_without_a_token_is_the_anonymous_caller() {
    let client = ().serve(TokioChildProcess::new(bridge(None)).unwrap()).await.unwrap();
    let list = client
        .call_tool(CallToolRequestParams::new("dealership.list").with_arguments(args(json!({}))))
        .await
        .unwrap();
    assert_eq!(ok(&list)["items"][0]["id"], "demo-feed");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_refuses_an_unknown_token_at_start() {
    let output = bridge(Some("not-a-token"))
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "nothing but MCP may reach stdout");
    assert!(String::from_utf8_lossy(&output.stderr).contains("DMS_BRIDGE_TOKEN"));
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dms-bridge conform`, run as a real process against the demo running as
//! another real process, over loopback: the demo conforms (both eras, the
//! tool contract, its level claims, the canonical contract on its data, the
//! AAP rules with a sandbox dealership, tenancy, PII); a token the
//! deployment does not know makes the report fail instead of passing blind.

use crate::common;

use std::time::Duration;

use common::process::free_addr;
use serde_json::Value;
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_dms-bridge");

async fn demo() -> (Child, String) {
    let addr = free_addr();
    let child = Command::new(BIN)
        .args(["demo", "--listen", &addr.to_string()])
        .env("DMS_BRIDGE_LOG", "error")
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let ready = format!("http://{addr}/readyz");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(r) = common::http_get(ready.clone()).await
            && r.status().is_success()
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the demo never got ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, format!("http://{addr}/mcp"))
}

async fn conform(args: &[&str]) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("conform.json");
    let out = Command::new(BIN)
        .arg("conform")
        .args(args)
        .arg("--json")
        .arg(&report)
        .env_remove("DMS_BRIDGE_TOKEN")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let json = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (out.status.code().unwrap_or(-1), stdout, json)
}

fn verdicts(report: &Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                format!(
                    "{} {}",
                    c["domain"].as_str().unwrap(),
                    c["name"].as_str().unwrap()
                ),
                c["verdict"].as_str().unwrap().to_owned(),
                c["detail"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_conforms_from_outside() {
    let (_demo, url) = demo().await;
    let (code, stdout, report) = conform(&[
        "--url",
        &url,
        "--token",
        "demo-token-cdk",
        "--other-dealership",
        "demo-feed",
        "--sandbox-dealership",
        "demo-cdk",
    ])
    .await;
    assert_eq!(code, 0, "{stdout}");
    let checks = verdicts(&report);
    for (name, verdict, detail) in &checks {
        // The demo serves host-safe names, so no warning is expected at all.
        assert_eq!(verdict, "pass", "{name}: {detail}\n{stdout}");
    }
    let names: Vec<&str> = checks.iter().map(|(n, _, _)| n.as_str()).collect();
    for expected in [
        "auth a forged token is refused",
        "protocol era answers",
        "protocol same tools in both eras",
        "protocol an unknown method is -32601",
        "tools every canonical tool",
        "levels claims backed by what is served",
        "inventory paging neither loses nor repeats",
        "repair_orders customer shown as initials only",
        "aap consent before any lead",
        "pii errors quote no customer data",
        "tenancy another dealership is refused",
        "aap duplicates and idempotency",
    ] {
        assert!(names.contains(&expected), "{expected} missing: {names:?}");
    }
    let versions = report["protocol_versions"].to_string();
    assert!(versions.contains("2026-07-28"), "{versions}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_token_fails_the_report_instead_of_passing_blind() {
    let (_demo, url) = demo().await;
    let (code, stdout, report) = conform(&["--url", &url, "--token", "not-a-demo-token"]).await;
    assert_eq!(code, 1, "{stdout}");
    let failed: Vec<String> = verdicts(&report)
        .into_iter()
        .filter(|(_, v, _)| v == "fail")
        .map(|(n, _, _)| n)
        .collect();
    assert!(
        failed.contains(&"protocol era answers".to_owned()),
        "{failed:?}"
    );
    assert!(stdout.contains("FAILED"), "{stdout}");
}

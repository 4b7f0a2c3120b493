#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dms-bridge probe`, run as a real process against the demo's mock
//! upstreams: one read per domain through a watching proxy, the first
//! canonical record, the exchanges with their timings (the token fetch
//! among them), and never a secret of the config in what it prints.

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dms-bridge");

async fn probe(args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new(BIN)
        .arg("probe")
        .args(args)
        .env("DMS_BRIDGE_LOG", "error")
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_rest_upstream_is_read_once_per_domain_with_its_exchanges() {
    let (code, stdout, stderr) = probe(&["--demo", "--upstream", "cdk-riverside", "--json"]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let reads = report["reads"].as_array().unwrap();
    let inventory = reads.iter().find(|r| r["domain"] == "inventory").unwrap();
    assert_eq!(inventory["outcome"], "ok");
    assert!(inventory["total"].as_u64().unwrap() > 1, "{inventory}");
    assert_eq!(inventory["count"], 1);
    assert!(
        inventory["first"]["id"]
            .as_str()
            .unwrap()
            .starts_with("veh_"),
        "{inventory}"
    );
    assert!(inventory["first"]["last_verified_at"].is_string());
    let repair_orders = reads
        .iter()
        .find(|r| r["domain"] == "repair_orders")
        .unwrap();
    assert_eq!(repair_orders["outcome"], "ok", "{repair_orders}");
    let exchanges = report["exchanges"].as_array().unwrap();
    let paths: Vec<&str> = exchanges
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"/oauth2/token"), "{paths:?}");
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("/cdk/sales/inventory/v2")),
        "{paths:?}"
    );
    for e in exchanges {
        assert!(e["status"].as_u64().is_some(), "{e}");
        assert!(!e["path"].as_str().unwrap().contains('?'), "{e}");
    }
    // The printed report carries none of the upstream's secrets.
    let (code, text, _) = probe(&["--demo", "--upstream", "cdk-riverside"]).await;
    assert_eq!(code, 0, "{text}");
    for secret in [
        "demo-cdk-secret",
        "demo-cdk-client",
        "demo-cdk-events-secret",
    ] {
        assert!(!text.contains(secret), "{secret} printed");
        assert!(!stdout.contains(secret), "{secret} in the JSON report");
    }
    assert!(text.contains("exchanges with the upstream"), "{text}");
}

#[tokio::test]
async fn a_failing_read_fails_the_probe_with_its_code() {
    // The demo's valuation mock does not know this (valid) VIN.
    let (code, stdout, stderr) = probe(&[
        "--demo",
        "--upstream",
        "blackbook",
        "--vin",
        "1HGCM82633A004352",
        "--json",
    ])
    .await;
    assert_eq!(code, 1, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let deals = &report["reads"][0];
    assert_eq!(deals["domain"], "deals");
    assert_eq!(deals["outcome"], "deals.trade_value_unavailable", "{deals}");
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dms-bridge verify`, run as a real process: every shipped profile passes
//! the canonical checks and the fault matrix against the demo's mocks (which
//! serve the shipped fixtures), and a profile with a vendor error code mapped
//! to the wrong class fails the cell that meets it, with the cell named.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

const BIN: &str = env!("CARGO_BIN_EXE_dms-bridge");

async fn verify(args: &[&str], dir: &std::path::Path) -> (i32, String, Vec<Value>) {
    let report = dir.join("report.json");
    let out = tokio::process::Command::new(BIN)
        .arg("verify")
        .args(args)
        .arg("--json")
        .arg(&report)
        .env("DMS_BRIDGE_LOG", "error")
        .current_dir(dir)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let reports = std::fs::read_to_string(&report)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or_default();
    (out.status.code().unwrap_or(-1), stdout, reports)
}

fn cells(report: &Value) -> &Vec<Value> {
    report["cells"].as_array().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shipped_profile_passes_verify_against_the_demo_upstreams() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, reports) = verify(&["--demo"], dir.path()).await;
    assert_eq!(code, 0, "{stdout}");
    let by_upstream: BTreeMap<&str, &Value> = reports
        .iter()
        .map(|r| (r["upstream"].as_str().unwrap(), r))
        .collect();
    // The upstreams that serve reads were verified, with checks and cells.
    for upstream in [
        "cdk-riverside",
        "xtime-riverside",
        "feed-lakeside",
        "tekion-hillcountry",
        "opentrack-lakeside",
        "blackbook",
    ] {
        let report = by_upstream[upstream];
        assert!(
            !report["checks"].as_array().unwrap().is_empty(),
            "{upstream}"
        );
        assert!(!cells(report).is_empty(), "{upstream}");
        for check in report["checks"].as_array().unwrap() {
            assert_eq!(check["verdict"], "pass", "{upstream}: {check}");
        }
        for cell in cells(report) {
            assert_eq!(cell["verdict"], "pass", "{upstream}: {cell}");
            assert_eq!(cell["survived"], true, "{upstream}: {cell}");
            assert_eq!(cell["leaked"], Value::Array(vec![]), "{upstream}: {cell}");
        }
    }
    // Upstreams that sign in for a token meet one more cell per domain than
    // those with fixed credentials: the refused token fetched again.
    let per_domain = |upstream: &str| {
        let report = by_upstream[upstream];
        cells(report).len() / report["domains"].as_array().unwrap().len()
    };
    assert_eq!(
        per_domain("cdk-riverside"),
        per_domain("opentrack-lakeside") + 1
    );
    assert_eq!(
        per_domain("tekion-hillcountry"),
        per_domain("feed-lakeside") + 1
    );
    assert!(
        cells(by_upstream["cdk-riverside"])
            .iter()
            .any(|c| c["fault"] == "token expired (refused once)" && c["answered"] == "success")
    );
    // The scheduler: its menu, its slots, and the matrix on availability.
    let xtime = by_upstream["xtime-riverside"];
    let names: Vec<&str> = xtime["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "service menu",
            "availability answers",
            "slots in the zone, ahead, in order"
        ]
    );
    assert!(cells(xtime).iter().all(|c| c["domain"] == "service"));
    assert_eq!(cells(xtime).len(), per_domain("cdk-riverside"));
    // Writes are never verified: leads and bookings stay where they are.
    let not_verified = by_upstream["crm-riverside"]["not_verified"].to_string();
    assert!(
        not_verified.contains("never sends a lead"),
        "{not_verified}"
    );
    assert!(stdout.contains("fault matrix"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vendor_code_mapped_to_the_wrong_class_fails_its_cell() {
    let cancel = CancellationToken::new();
    let mocks = dms_bridge_testkit::start_mocks(std::time::Duration::ZERO, &cancel)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let listen: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    let config = dms_bridge::cli::demo::render(mocks.addresses(), listen)
        .replace("profile = \"cdk-fortellis\"", "profile = \"vendor.toml\"");
    std::fs::write(dir.path().join("bridge.toml"), config).unwrap();
    // An integrator's slip: the vendor's "processing error" (a fault on its
    // side, worth retrying) mapped as if the request were wrong.
    let profile = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("adapters/cdk-fortellis.toml"),
    )
    .unwrap();
    let slipped = profile.replace(
        "PROCESSING-ERROR = \"unavailable\"",
        "PROCESSING-ERROR = \"rejected\"",
    );
    assert_ne!(slipped, profile);
    std::fs::write(dir.path().join("vendor.toml"), slipped).unwrap();
    let (code, stdout, reports) = verify(
        &["--config", "bridge.toml", "--upstream", "cdk-riverside"],
        dir.path(),
    )
    .await;
    cancel.cancel();
    assert_eq!(code, 1, "{stdout}");
    let report = &reports[0];
    let failed: Vec<&Value> = cells(report)
        .iter()
        .filter(|c| c["verdict"] == "fail")
        .collect();
    // The cell whose answer carries that code, in each domain, and only it.
    assert_eq!(failed.len(), 2, "{failed:#?}");
    for cell in failed {
        assert_eq!(cell["fault"], "500 echoing customer data");
        assert_eq!(cell["answered"], "upstream.rejected");
        assert_eq!(cell["expected"], "upstream.unavailable retryable");
    }
    for check in report["checks"].as_array().unwrap() {
        assert_eq!(check["verdict"], "pass", "{check}");
    }
    assert!(
        stdout.contains("FAIL inventory      500 echoing customer data"),
        "{stdout}"
    );
}

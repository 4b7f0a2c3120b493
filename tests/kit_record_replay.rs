#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dms-bridge record` and `dms-bridge replay`, as the real binary: a bridge
//! recording a JSON (Tekion) and a SOAP (OpenTrack) upstream of the test-kit's
//! mocks while a real MCP client calls it; the fixture set it writes holds no
//! customer's name, e-mail address or phone number and no credential; served
//! by `replay`, it makes a second bridge answer the same calls the same way,
//! but for the faked customer fields.

use crate::common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::process::free_addr;
use common::{call, connect};
use dms_bridge_testkit::start_mocks;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "kit-token";

/// Two service departments: one on the Tekion mock, one on the OpenTrack mock.
fn config(tekion: &str, opentrack: &str, listen: &str) -> String {
    format!(
        r#"
[server]
listen = "{listen}"

[store]
url = "sqlite::memory:"

[[dealerships]]
id = "svc-tekion"
name = "Tekion Service"
timezone = "America/Chicago"
address = {{ line1 = "1 Main St", city = "Austin", region = "TX", postal_code = "78701", country = "US" }}
routes = {{ repair_orders = "tekion-up" }}

[[dealerships]]
id = "svc-ot"
name = "OpenTrack Service"
timezone = "America/Chicago"
address = {{ line1 = "2 Main St", city = "Austin", region = "TX", postal_code = "78701", country = "US" }}
routes = {{ repair_orders = "ot-up" }}

[upstreams.tekion-up]
kind = "rest"
profile = "tekion"
base_url = "{tekion}"
token_url = "{tekion}/openapi/public/tokens"
client_id = {{ value = "demo-tekion-app" }}
client_secret = {{ value = "demo-tekion-secret" }}
vars = {{ app_id = "demo-tekion-app", dealer_id = "hill-country-01" }}

[upstreams.ot-up]
kind = "soap"
profile = "opentrack"
base_url = "{opentrack}"
username = {{ value = "demo-opentrack-user" }}
password = {{ value = "demo-opentrack-pass" }}
vars = {{ enterprise_code = "LK", company_number = "LK1" }}

[[tokens]]
name = "kit"
secret = {{ value = "{TOKEN}" }}
dealerships = ["svc-tekion", "svc-ot"]
scopes = ["amcp:service:read"]
"#
    )
}

/// The mocks' customers and service writers, their e-mail addresses and
/// phone numbers, and the credentials the bridge sends and receives.
const SECRETS: &[&str] = &[
    "Whitfield",
    "Ortega",
    "Lindqvist",
    "Fischer",
    "Adeyemi",
    "Okafor",
    "Moreno",
    "dana.",
    "luis.",
    "5125550",
    "+1512",
    "12 Elm St",
    "48 Pecan",
    "demo-tekion-secret",
    "demo-tekion-token",
    "demo-opentrack-pass",
    "demo-opentrack-user",
    "Bearer ",
];

/// `YYYY-MM-DD`, `days` before today in Chicago (the mocks move their
/// fixtures' dates to end near today there).
fn day(days: i64) -> String {
    let today = chrono::Utc::now()
        .with_timezone(&chrono_tz::America::Chicago)
        .date_naive();
    (today - chrono::Days::new(days as u64)).to_string()
}

fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dms-bridge"));
    command.env("DMS_BRIDGE_LOG", "warn").kill_on_drop(true);
    command
}

async fn wait_healthy(addr: std::net::SocketAddr) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if common::http_get(format!("http://{addr}/healthz"))
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the recording bridge did not come up on {addr}");
}

/// Each call's result: the structured content, or the error envelope.
async fn answers(url: &str, calls: &[(&str, Value)]) -> Vec<Value> {
    let client = connect(url, Some(TOKEN)).await;
    let mut out = Vec::new();
    for (tool, args) in calls {
        let result = call(&client, tool, args.clone()).await;
        assert_ne!(result.is_error, Some(true), "{tool}: {:?}", result.content);
        out.push(result.structured_content.unwrap());
    }
    out
}

/// `answer` without what the faker changes (customer and advisor names) or
/// what differs between two bridges anyway (signed cursors).
fn without_people(answer: &Value) -> Value {
    match answer {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.contains("customer") && *k != "advisor" && *k != "next_cursor")
                .map(|(k, v)| (k.clone(), without_people(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_people).collect()),
        other => other.clone(),
    }
}

/// Every file of the set, as text.
fn files(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned(),
            )
        })
        .collect()
}

/// `dms-bridge replay --fixtures dir`, and the URL it prints.
async fn replay(dir: &Path) -> (Child, String) {
    let mut child = bin()
        .args(["replay", "--fixtures"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("replay prints its address")
        .unwrap()
        .expect("a line");
    assert!(line.starts_with("http://127.0.0.1:"), "{line}");
    (child, line)
}

/// Records `upstream` while `calls` are made, for exactly `exchanges`
/// upstream exchanges; replays the set to a second bridge; compares.
async fn record_then_replay(
    upstream: &str,
    mock_url: impl Fn(&dms_bridge_testkit::MockUpstreams) -> String,
    calls: &[(&str, Value)],
    exchanges: usize,
) {
    let cancel = CancellationToken::new();
    let mocks = start_mocks(Duration::ZERO, &cancel).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (config_path, out) = (dir.path().join("bridge.toml"), dir.path().join("set"));
    let listen = free_addr();
    let toml = config(&mocks.tekion_url, &mocks.opentrack_url, &listen.to_string());
    std::fs::write(&config_path, &toml).unwrap();

    let recorder = bin()
        .args([
            "record",
            "--upstream",
            upstream,
            "--calls",
            &exchanges.to_string(),
            "--config",
        ])
        .arg(&config_path)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    wait_healthy(listen).await;
    let recorded = answers(&format!("http://{listen}/mcp"), calls).await;
    let finished = tokio::time::timeout(Duration::from_secs(30), recorder.wait_with_output())
        .await
        .expect("the recording stops by itself after --calls exchanges")
        .unwrap();
    assert!(finished.status.success(), "{:?}", finished.status);
    let said = String::from_utf8(finished.stdout).unwrap();
    assert!(
        said.contains(&format!(
            "recorded {exchanges} exchange(s) of upstream {upstream}"
        )),
        "{said}"
    );

    let set = dms_bridge::kit::fixtures::load(&out).unwrap();
    assert_eq!(set.set.exchanges.len(), exchanges);
    assert_eq!(set.set.upstream, upstream);
    for (name, text) in files(&out) {
        for secret in SECRETS {
            assert!(
                !text.to_lowercase().contains(&secret.to_lowercase()),
                "{name} holds {secret:?}"
            );
        }
    }

    let (_replay, replay_url) = replay(&out).await;
    // A request the set does not hold: a 404 that says what was asked and what is there.
    let miss = common::http_get(format!("{replay_url}/not/recorded?x=1"))
        .await
        .unwrap();
    assert_eq!(miss.status(), 404);
    let miss: Value = miss.json().await.unwrap();
    assert_eq!(miss["asked"]["path"], "/not/recorded");
    assert_eq!(miss["asked"]["query"], json!([["x", "1"]]));
    let first = &set.set.exchanges[0];
    let held = miss["recorded"].as_array().unwrap();
    assert!(
        held.iter().any(|r| r
            .as_str()
            .unwrap()
            .starts_with(&format!("{} {}", first.method, first.path))),
        "{miss}"
    );
    // The second bridge knows the upstream only by the replay's address.
    let offline = common::with_config(&toml.replace(&mock_url(&mocks), &replay_url)).await;
    cancel.cancel();
    let replayed = answers(&offline.url, calls).await;
    assert_eq!(recorded.len(), replayed.len());
    for (a, b) in recorded.iter().zip(&replayed) {
        assert_eq!(without_people(a), without_people(b));
    }
    assert_ne!(recorded, replayed, "the customers in the set are fakes");
    verify_replayed(&config_path, upstream, &out).await;
}

/// `verify --fixtures` runs the canonical checks and the fault matrix
/// against the recorded set, replayed in place of the upstream. The set holds
/// only what was recorded: verify's lookup of the first listed order (another
/// number than the recorded lookup) is answered "not found" by the replay,
/// and that check alone may fail, saying so (a set with no order in verify's
/// range only warns that nothing was checked on data).
async fn verify_replayed(config: &Path, upstream: &str, set: &Path) {
    let report = set.with_extension("verify.json");
    let out = bin()
        .arg("verify")
        .arg("--config")
        .arg(config)
        .args(["--upstream", upstream, "--fixtures"])
        .arg(set)
        .arg("--json")
        .arg(&report)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let reports: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let report = &reports[0];
    assert_eq!(report["upstream"], upstream);
    let checks = report["checks"].as_array().unwrap();
    assert!(checks.len() >= 5, "{stdout}");
    for check in checks {
        if check["verdict"] != "fail" {
            continue;
        }
        assert_eq!(check["name"], "lookup by number", "{stdout}");
        let detail = check["detail"].as_str().unwrap();
        assert!(
            detail.contains("service.repair_order_not_found"),
            "{stdout}"
        );
    }
    // The refused-token cell is one only where the upstream signs in for a token.
    let cells = report["cells"].as_array().unwrap();
    let token_cell = cells
        .iter()
        .any(|c| c["fault"] == "token expired (refused once)");
    assert_eq!(token_cell, upstream == "tekion-up", "{stdout}");
    assert_eq!(cells.len(), if token_cell { 17 } else { 16 }, "{stdout}");
    assert!(cells.iter().all(|c| c["verdict"] == "pass"), "{stdout}");
}

/// One repair order by number, then the detailed list of `from`..`to`.
fn repair_order_calls(
    dealership: &str,
    ro_number: &str,
    from: String,
    to: String,
) -> [(&'static str, Value); 2] {
    [
        (
            "service.get_repair_order",
            json!({ "dealership_id": dealership, "ro_number": ro_number }),
        ),
        (
            "service.list_repair_orders",
            json!({ "dealership_id": dealership, "from": from, "to": to, "response_format": "detailed" }),
        ),
    ]
}

#[tokio::test]
async fn a_tekion_json_upstream_is_recorded_without_customers_and_replayed() {
    let calls = repair_order_calls("svc-tekion", "60102", day(40), day(0));
    // The token, the lookup, then two pages.
    record_then_replay("tekion-up", |m| m.tekion_url.clone(), &calls, 4).await;
}

#[tokio::test]
async fn an_opentrack_soap_upstream_is_recorded_without_customers_and_replayed() {
    // Two days with closed orders: the fixtures' 13 and 14 November, which the
    // mock moves to end near today.
    let calls = repair_order_calls("svc-ot", "60090", day(4), day(3));
    // The details, then one call per day.
    record_then_replay("ot-up", |m| m.opentrack_url.clone(), &calls, 3).await;
}

#[tokio::test]
async fn an_unbounded_recording_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bridge.toml");
    std::fs::write(
        &path,
        config("http://127.0.0.1:9", "http://127.0.0.1:9", "127.0.0.1:0"),
    )
    .unwrap();
    let out = bin()
        .args(["record", "--upstream", "tekion-up", "--config"])
        .arg(&path)
        .arg("--out")
        .arg(dir.path().join("set"))
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("refusing an unbounded recording"), "{said}");
    assert!(!dir.path().join("set").exists(), "nothing written");
}

#[tokio::test]
async fn a_timed_recording_stops_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bridge.toml");
    let listen = free_addr();
    std::fs::write(
        &path,
        config(
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            &listen.to_string(),
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let recorder = bin()
        .args(["record", "--upstream", "ot-up", "--for", "3s", "--config"])
        .arg(&path)
        .arg("--out")
        .arg(dir.path().join("set"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_healthy(listen).await;
    let out = tokio::time::timeout(Duration::from_secs(60), recorder.wait_with_output())
        .await
        .expect("the recording stops after --for")
        .unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("recorded 0 exchange(s) of upstream ot-up")
    );
    let set = dms_bridge::kit::fixtures::load(&dir.path().join("set")).unwrap();
    assert!(set.set.exchanges.is_empty());
    assert_eq!(set.set.kind, "soap");
}

#[tokio::test]
async fn a_tampered_set_is_refused_naming_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let index = json!({
        "schema_version": 1, "upstream": "tk", "kind": "rest", "recorded_at": "2026-11-27T00:00:00Z",
        "recorded_by": "test",
        "exchanges": [
            { "method": "GET", "path": "/a", "status": 200, "headers": { "content-type": "application/json" }, "body": "001-get-a.json" },
            { "method": "GET", "path": "/b", "status": 200, "headers": { "content-type": "application/json" }, "body": "002-get-b.json" },
        ]
    });
    std::fs::write(dir.path().join("fixtures.json"), index.to_string()).unwrap();
    std::fs::write(
        dir.path().join("001-get-a.json"),
        "{\"data\": [{\"id\": 1}, {\"id\"",
    )
    .unwrap();
    std::fs::write(dir.path().join("002-get-b.json"), "<data><id>1</id></data>").unwrap();
    let out = bin()
        .args(["replay", "--fixtures"])
        .arg(dir.path())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "no address printed");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("001-get-a.json: declared application/json but is not JSON"),
        "{said}"
    );
    assert!(
        said.contains("002-get-b.json: declared application/json but is not JSON"),
        "{said}"
    );
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The MarketCheck tutorial (docs/guides/tutorial-marketcheck.md), run as the
//! real binary from the repo root with the files in `examples/marketcheck/`:
//! the mapping test on each page of the fixture set and on both, a deliberate
//! mistake caught, `check`, `replay` starting on the set, and `verify
//! --fixtures` passing every canonical check and fault cell. The docs runner
//! runs the same blocks; this keeps them in CI if it changes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dms-bridge");
const PROFILE: &str = "examples/marketcheck/marketcheck.toml";
const MAPPING: &str = "examples/marketcheck/marketcheck-inventory.toml";
const CONFIG: &str = "examples/marketcheck/bridge.toml";
const FIXTURES: &str = "examples/marketcheck/fixtures";
const TUTORIAL: &str = "docs/guides/tutorial-marketcheck.md";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root())
        .env("MARKETCHECK_API_KEY", "not-used-offline")
        .env("DMS_BRIDGE_LOG", "error")
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The fixture set's page bodies, in the order `fixtures.json` lists them.
fn pages() -> Vec<(String, Value)> {
    let set: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join(FIXTURES).join("fixtures.json")).unwrap(),
    )
    .unwrap();
    set["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let file = format!("{FIXTURES}/{}", e["body"].as_str().unwrap());
            let body = serde_json::from_str(&std::fs::read_to_string(root().join(&file)).unwrap())
                .unwrap();
            (file, body)
        })
        .collect()
}

fn listings(body: &Value) -> usize {
    body["listings"].as_array().unwrap().len()
}

#[test]
fn the_fixture_set_has_two_pages_that_add_up_to_num_found() {
    let pages = pages();
    assert!(pages.len() >= 2, "paging needs two pages at least");
    let total: usize = pages.iter().map(|(_, b)| listings(b)).sum();
    for (file, body) in &pages {
        assert_eq!(body["num_found"].as_u64(), Some(total as u64), "{file}");
    }
    // Every page but the last is full (the profile's page_size).
    let profile: toml::Table = std::fs::read_to_string(root().join(PROFILE))
        .unwrap()
        .parse()
        .unwrap();
    let page_size = usize::try_from(
        profile["inventory"]["pagination"]["page_size"]
            .as_integer()
            .unwrap(),
    )
    .unwrap();
    for (file, body) in &pages[..pages.len() - 1] {
        assert_eq!(listings(body), page_size, "{file}");
    }
}

#[test]
fn the_mapping_test_passes_on_each_page_and_on_both() {
    let pages = pages();
    for (file, body) in &pages {
        let out = run(&[
            "mapping",
            "test",
            "--profile",
            PROFILE,
            "--response",
            file,
            "--show",
            "1",
        ]);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(0), "{all}");
        let ok = format!("OK: {} record(s), 0 error(s), 0 warning(s)", listings(body));
        assert!(all.contains(&ok), "expected `{ok}`:\n{all}");
        assert!(all.contains("<- /media/photo_links[*]"), "{all}");
    }
    let mut args = vec!["mapping", "test", "--profile", PROFILE, "--show", "0"];
    for (file, _) in &pages {
        args.extend(["--response", file.as_str()]);
    }
    let out = run(&args);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let total: usize = pages.iter().map(|(_, b)| listings(b)).sum();
    assert!(
        all.contains(&format!("OK: {total} record(s), 0 error(s)")),
        "{all}"
    );
    // The JSON report: every record listed, the three inventory types read
    // as the three conditions.
    let out = run(&[
        "mapping",
        "test",
        "--profile",
        PROFILE,
        "--response",
        &pages[0].0,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let records = report["records"].as_array().unwrap();
    assert_eq!(records.len(), listings(&pages[0].1));
    let mut conditions = std::collections::BTreeSet::new();
    for record in records {
        assert_eq!(record["outcome"], "listed", "{record}");
        for field in record["fields"].as_array().unwrap() {
            if field["field"] == "condition" {
                conditions.insert(field["value"].as_str().unwrap().to_owned());
            }
        }
    }
    assert_eq!(
        conditions.into_iter().collect::<Vec<_>>(),
        ["cpo", "new", "used"]
    );
}

#[test]
fn the_tutorials_deliberate_mistake_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let broken: PathBuf = dir.path().join("marketcheck-inventory.toml");
    let good = std::fs::read_to_string(root().join(MAPPING)).unwrap();
    assert!(good.contains("\"/build/body_type\""));
    std::fs::write(
        &broken,
        good.replace("\"/build/body_type\"", "\"/body_type\""),
    )
    .unwrap();
    let (file, body) = &pages()[0];
    let out = run(&[
        "mapping",
        "test",
        "--profile",
        PROFILE,
        "--mapping",
        broken.to_str().unwrap(),
        "--response",
        file,
        "--show",
        "0",
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let error = format!(
        "error: path /body_type (body) matched nothing in {} row(s)",
        listings(body)
    );
    assert!(all.contains(&error), "{all}");
}

#[test]
fn the_config_passes_check() {
    let out = run(&["check", "--config", CONFIG]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("OK (1 dealership(s), 1 upstream(s), 1 token(s))"),
        "{all}"
    );
}

#[test]
fn replay_starts_on_the_fixture_set() {
    let mut child = Command::new(BIN)
        .args(["replay", "--fixtures", FIXTURES])
        .current_dir(root())
        .env("DMS_BRIDGE_LOG", "error")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(line.starts_with("http://127.0.0.1:"), "{line:?}");
}

#[test]
fn verify_passes_every_check_and_fault_cell_against_the_fixture_set() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = run(&[
        "verify",
        "--config",
        CONFIG,
        "--upstream",
        "marketcheck",
        "--fixtures",
        FIXTURES,
        "--json",
        report.to_str().unwrap(),
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let reports: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = &reports[0];
    assert_eq!(report["upstream"], "marketcheck");
    let checks = report["checks"].as_array().unwrap();
    let cells = report["cells"].as_array().unwrap();
    assert!(!checks.is_empty() && !cells.is_empty(), "{report}");
    for check in checks {
        assert_eq!(check["verdict"], "pass", "{check}");
    }
    for cell in cells {
        assert_eq!(cell["verdict"], "pass", "{cell}");
        assert_eq!(cell["survived"], true, "{cell}");
        assert_eq!(cell["leaked"], Value::Array(vec![]), "{cell}");
    }
}

/// The tutorial shows the commands this file runs, with the same files.
#[test]
fn the_tutorial_runs_these_commands() {
    let doc = std::fs::read_to_string(root().join(TUTORIAL)).unwrap();
    for needle in [
        "dms-bridge mapping test --profile examples/marketcheck/marketcheck.toml",
        "--response examples/marketcheck/fixtures/001-get-v2-dealerships-inventory.json",
        "--response examples/marketcheck/fixtures/002-get-v2-dealerships-inventory.json",
        "MARKETCHECK_API_KEY=not-used-offline dms-bridge check --config examples/marketcheck/bridge.toml",
        "MARKETCHECK_API_KEY=not-used-offline dms-bridge verify --config examples/marketcheck/bridge.toml",
        "--upstream marketcheck --fixtures examples/marketcheck/fixtures",
        "error: path /body_type (body) matched nothing in 50 row(s)",
    ] {
        assert!(doc.contains(needle), "{TUTORIAL} lacks `{needle}`");
    }
    // And the docs index and the adapter guide link it.
    for file in ["docs/README.md", "docs/guides/writing-an-adapter.md"] {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        assert!(text.contains("tutorial-marketcheck.md"), "{file}");
    }
}

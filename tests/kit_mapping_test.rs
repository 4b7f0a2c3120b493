#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dms-bridge mapping test`, run as a real process against the shipped
//! profiles and mappings with their fixtures, and against broken variants:
//! a path that matches nothing, a records path that matches nothing, a
//! required field no record has, a file that is not what its name says.
//! Plus `check` placing a profile's or mapping's mistake at its file and line.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dms-bridge");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(rel: &str) -> String {
    root()
        .join("wiremock-fixtures")
        .join(rel)
        .display()
        .to_string()
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

fn mapping_test(args: &[&str]) -> Run {
    let out = Command::new(BIN)
        .args(["mapping", "test"])
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn json_report(args: &[&str]) -> (i32, Value) {
    let mut all = args.to_vec();
    all.push("--json");
    let run = mapping_test(&all);
    let report = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    (run.code, report)
}

/// Every shipped profile and mapping passes against the fixtures it was
/// written from (several answers where one read has open and closed orders).
#[test]
fn every_shipped_profile_and_mapping_passes_against_its_fixtures() {
    let cases: Vec<Vec<String>> = vec![
        vec![
            "--profile".into(),
            "cdk-fortellis".into(),
            "--response".into(),
            fixture("cdk/merchandisable-vehicles.json"),
        ],
        vec![
            "--profile".into(),
            "cdk-fortellis".into(),
            "--read".into(),
            "open".into(),
            "--response".into(),
            fixture("cdk/repair-orders/result-open.json"),
            "--response".into(),
            fixture("cdk/repair-orders/result-closed.json"),
        ],
        // `tekion` also reads inventory now, which a profile test reads
        // unless a repair-order read is named.
        vec![
            "--profile".into(),
            "tekion".into(),
            "--read".into(),
            "all".into(),
            "--response".into(),
            fixture("tekion/repair-orders-page-1.json"),
            "--response".into(),
            fixture("tekion/repair-orders-page-2.json"),
        ],
        vec![
            "--profile".into(),
            "tekion".into(),
            "--response".into(),
            fixture("tekion/inventory-page-1.json"),
            "--response".into(),
            fixture("tekion/inventory-page-2.json"),
        ],
        vec![
            "--profile".into(),
            "opentrack".into(),
            "--response".into(),
            fixture("opentrack/vehicle-inventory.xml"),
        ],
        vec![
            "--profile".into(),
            "reynolds-rci".into(),
            "--response".into(),
            fixture("reynolds/vehicle-inventory.xml"),
        ],
        vec![
            "--profile".into(),
            "reynolds-rci".into(),
            "--read".into(),
            "closed".into(),
            "--response".into(),
            fixture("reynolds/repair-orders-closed-20261112.xml"),
            "--response".into(),
            fixture("reynolds/repair-orders-closed-20261113.xml"),
            "--response".into(),
            fixture("reynolds/repair-orders-closed-20261116.xml"),
        ],
        // Open orders have no posting dates, status or totals yet; with a
        // closed one beside them every path the mapping reads is reached.
        vec![
            "--profile".into(),
            "reynolds-rci".into(),
            "--read".into(),
            "open".into(),
            "--response".into(),
            fixture("reynolds/repair-orders-open.xml"),
            "--response".into(),
            fixture("reynolds/repair-order-610212.xml"),
        ],
        vec![
            "--profile".into(),
            "reynolds-rci".into(),
            "--read".into(),
            "get".into(),
            "--response".into(),
            fixture("reynolds/repair-order-610212.xml"),
        ],
        vec![
            "--profile".into(),
            "opentrack".into(),
            "--read".into(),
            "closed".into(),
            "--response".into(),
            fixture("opentrack/closed-repair-orders-20261105.xml"),
        ],
        vec![
            "--profile".into(),
            "opentrack".into(),
            "--read".into(),
            "get".into(),
            "--response".into(),
            fixture("opentrack/repair-order-details-60080.xml"),
        ],
        vec![
            "--mapping".into(),
            "homenet-csv".into(),
            "--response".into(),
            fixture("feed/homenet-inventory.csv"),
        ],
        vec![
            "--mapping".into(),
            "google-vehicle-listings".into(),
            "--response".into(),
            fixture("feed/google-vehicle-listings.tsv"),
        ],
        vec![
            "--mapping".into(),
            "meta-automotive-xml".into(),
            "--response".into(),
            fixture("feed-xml/meta-automotive-inventory.xml"),
        ],
    ];
    for case in cases {
        let args: Vec<&str> = case.iter().map(String::as_str).collect();
        let (code, report) = json_report(&args);
        assert_eq!(code, 0, "{args:?}: {report:#}");
        let records = report["records"].as_array().unwrap();
        assert!(!records.is_empty(), "{args:?}");
        let errors: Vec<&Value> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .collect();
        assert!(errors.is_empty(), "{args:?}: {errors:?}");
    }
}

/// Each field names the path its value came from, and the value is what the
/// fixture holds there, converted as the tools answer it.
#[test]
fn each_field_names_its_source_path_and_value() {
    let path = fixture("cdk/merchandisable-vehicles.json");
    let (code, report) = json_report(&["--profile", "cdk-fortellis", "--response", &path]);
    assert_eq!(code, 0);
    let answer: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let units = answer["results"].as_array().unwrap();
    let records = report["records"].as_array().unwrap();
    assert_eq!(records.len(), units.len());
    let field = |record: &Value, name: &str| -> Value {
        record["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["field"] == name)
            .cloned()
            .unwrap()
    };
    let mut checked_prices = 0;
    for (unit, record) in units.iter().zip(records) {
        if record["outcome"] != "listed" {
            continue;
        }
        let vin = field(record, "vin");
        assert_eq!(vin["value"], unit["vin"]);
        assert_eq!(vin["source"], "/vin");
        let selling = unit["financials"]["prices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["type"] == "SELLING");
        let price = field(record, "price");
        if let Some(selling) = selling {
            // MVS2 writes amounts as decimal text in whole units.
            let major: f64 = match &selling["amount"] {
                Value::String(s) => s.parse().unwrap(),
                other => other.as_f64().unwrap(),
            };
            let minor = (major * 100.0).round() as i64;
            assert_eq!(price["value"]["amount"], minor, "{record:#}");
            assert_eq!(price["source"], "/financials/prices[type=SELLING]/amount");
            checked_prices += 1;
        } else {
            // The fallback path, named as the source.
            assert_eq!(
                price["source"], "/financials/prices[type=ADVERTISED]/amount",
                "{record:#}"
            );
        }
        let msrp = field(record, "msrp");
        let has_msrp = unit["financials"]["prices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["type"] == "MSRP");
        if !has_msrp {
            assert_eq!(msrp["value"], Value::Null);
            assert_eq!(
                msrp["reason"],
                "no value at /financials/prices[type=MSRP]/amount"
            );
        }
    }
    assert!(checked_prices > 10, "{checked_prices}");
}

/// Writes a copy of a shipped mapping with `edit` applied, in a temp dir.
fn edited(dir: &Path, name: &str, from: &str, edit: impl Fn(&str) -> String) -> String {
    let text = std::fs::read_to_string(root().join(from)).unwrap();
    let changed = edit(&text);
    assert_ne!(changed, text, "the edit changed nothing");
    let path = dir.join(name);
    std::fs::write(&path, changed).unwrap();
    path.display().to_string()
}

#[test]
fn a_path_that_matches_nothing_fails_and_names_the_path_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let mapping = edited(dir.path(), "m.toml", "mappings/cdk-inventory.toml", |t| {
        t.replace("make = \"/make\"", "make = \"/mke\"")
    });
    let response = fixture("cdk/merchandisable-vehicles.json");
    let run = mapping_test(&[
        "--profile",
        "cdk-fortellis",
        "--mapping",
        &mapping,
        "--response",
        &response,
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("error: path /mke (make) matched nothing in 72 row(s)"),
        "{run:?}"
    );
    assert!(run.stdout.contains("no value at /mke"), "{run:?}");
    assert!(run.stdout.contains("\nFAILED: "), "{run:?}");
    // Allowed explicitly, it is a warning and the test passes.
    let run = mapping_test(&[
        "--profile",
        "cdk-fortellis",
        "--mapping",
        &mapping,
        "--response",
        &response,
        "--allow-unmatched",
        "/mke",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("allowed by --allow-unmatched"),
        "{run:?}"
    );
}

#[test]
fn a_records_path_that_matches_nothing_fails() {
    let dir = tempfile::tempdir().unwrap();
    let profile = edited(dir.path(), "p.toml", "adapters/cdk-fortellis.toml", |t| {
        t.replace("records = \"/results\"", "records = \"/reslts\"")
    });
    let run = mapping_test(&[
        "--profile",
        &profile,
        "--mapping",
        "cdk-inventory",
        "--response",
        &fixture("cdk/merchandisable-vehicles.json"),
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("the records path /reslts (profile [inventory] records) matched nothing"),
        "{run:?}"
    );
}

#[test]
fn a_required_field_missing_from_every_record_fails() {
    let dir = tempfile::tempdir().unwrap();
    let mapping = edited(
        dir.path(),
        "m.toml",
        "mappings/tekion-repair-orders.toml",
        |t| {
            t.replace(
                "ro_number = \"/repairOrderNumber\"",
                "ro_number = \"/roNumber\"",
            )
        },
    );
    let run = mapping_test(&[
        "--profile",
        "tekion",
        "--mapping",
        &mapping,
        "--response",
        &fixture("tekion/repair-orders-page-1.json"),
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    for expected in [
        "required field ro_number is missing from every record",
        "no record could be mapped",
        "path /roNumber (ro_number) matched nothing",
    ] {
        assert!(run.stdout.contains(expected), "{expected}: {run:?}");
    }
}

#[test]
fn an_answer_that_is_not_what_its_name_says_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("inventory.json");
    std::fs::copy(
        fixture("opentrack/closed-repair-orders-20261105.xml"),
        &fake,
    )
    .unwrap();
    let run = mapping_test(&[
        "--profile",
        "cdk-fortellis",
        "--response",
        fake.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("inventory.json: named .json but its content reads as xml"),
        "{run:?}"
    );
    let truncated = dir.path().join("cut.json");
    let text = std::fs::read_to_string(fixture("cdk/merchandisable-vehicles.json")).unwrap();
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let run = mapping_test(&[
        "--profile",
        "cdk-fortellis",
        "--response",
        truncated.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("cut.json: not readable JSON"),
        "{run:?}"
    );
}

/// `check` places a mistake in a profile or mapping file at its file, section and line.
#[test]
fn check_names_the_file_section_and_line_of_a_profile_or_mapping_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let profile = std::fs::read_to_string(root().join("adapters/cdk-fortellis.toml"))
        .unwrap()
        .replace("{vars.subscription_id}", "{vars.subscripton}")
        .replace(
            "mapping = \"cdk-inventory\"",
            "mapping = \"vendor-map.toml\"",
        );
    std::fs::write(dir.path().join("vendor.toml"), &profile).unwrap();
    let mapping = std::fs::read_to_string(root().join("mappings/cdk-inventory.toml"))
        .unwrap()
        .replace("model = \"/model\"", "modle = \"/model\"");
    std::fs::write(dir.path().join("vendor-map.toml"), &mapping).unwrap();
    let line_of =
        |text: &str, needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let config = std::process::Command::new(BIN)
        .args(["demo", "--print-config"])
        .output()
        .unwrap();
    let config = String::from_utf8(config.stdout)
        .unwrap()
        .replace("profile = \"cdk-fortellis\"", "profile = \"vendor.toml\"");
    std::fs::write(dir.path().join("bridge.toml"), config).unwrap();
    let out = Command::new(BIN)
        .args(["check", "--config", "bridge.toml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let header_line = line_of(&profile, "Subscription-Id =");
    assert!(
        stderr.contains(&format!(
            "profile headers.Subscription-Id (vendor.toml line {header_line}, [headers]): {{vars.subscripton}} is not defined"
        )),
        "{stderr}"
    );
    let field_line = line_of(&mapping, "modle =");
    assert!(
        stderr.contains(&format!(
            "mapping vendor-map.toml: fields.modle (vendor-map.toml line {field_line}, [fields]): not a canonical vehicle field"
        )),
        "{stderr}"
    );
    // A key the profile's format does not know: the file, line and section.
    let typo = profile.replace("records = \"/results\"", "recrods = \"/results\"");
    std::fs::write(dir.path().join("vendor.toml"), &typo).unwrap();
    let out = Command::new(BIN)
        .args(["check", "--config", "bridge.toml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let typo_line = line_of(&typo, "recrods =");
    assert!(
        stderr.contains(&format!(
            "profile: vendor.toml: line {typo_line}, [inventory]: unknown field `recrods`"
        )),
        "{stderr}"
    );
}

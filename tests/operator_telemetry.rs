//! What an operator's monitoring reads: every metric family and the series the
//! config names exist from the first scrape, with `build_info` and the
//! standard `process_*` families; the Grafana dashboard in `deploy/` reads only
//! what the bridge exports; `DMS_BRIDGE_LOG=debug` shows the bridge, not the
//! database and TLS libraries under it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::Duration;

use crate::common;
use common::process::free_addr;
use common::{call, connect, ok};
use serde_json::{Value, json};

/// The families (`# TYPE` lines) of an OpenMetrics exposition, by name.
fn families(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The sample lines whose series name is `name` (labels included in the line).
fn samples<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.split(['{', ' ']).next() == Some(name))
        .collect()
}

#[tokio::test]
async fn every_family_and_the_configs_series_are_there_before_any_call() {
    let bridge = common::demo().await;
    let text = common::metrics_text(&bridge).await;
    let families = families(&text);
    let expected = [
        "dms_bridge_build_info",
        "dms_bridge_tool_calls",
        "dms_bridge_tool_call_duration_seconds",
        "dms_bridge_cache_lookups",
        "dms_bridge_rate_limited",
        "dms_bridge_upstream_requests",
        "dms_bridge_upstream_request_duration_seconds",
        "dms_bridge_circuit_state",
        "dms_bridge_audit_dropped",
        "dms_bridge_quota_fallbacks",
        "dms_bridge_leads",
        "dms_bridge_lead_delivery_attempts",
        "dms_bridge_mirror_syncs",
        "dms_bridge_mirror_units",
        "dms_bridge_mirror_events",
        "dms_bridge_repair_order_watch",
        "dms_bridge_webhook_deliveries",
        "dms_bridge_webhook_undelivered_events",
        "dms_bridge_inbound_events",
        "process_cpu_seconds",
        "process_resident_memory_bytes",
        "process_virtual_memory_bytes",
        "process_threads",
        "process_open_fds",
        "process_max_fds",
        "process_start_time_seconds",
    ];
    let missing: Vec<_> = expected
        .iter()
        .filter(|f| !families.contains(**f))
        .collect();
    assert!(
        missing.is_empty(),
        "missing families {missing:?} in\n{text}"
    );

    let build = samples(&text, "dms_bridge_build_info");
    let version = format!("version=\"{}\"", env!("CARGO_PKG_VERSION"));
    let toolset = format!("toolset=\"{}\"", dms_bridge::tools::TOOLSET_VERSION);
    assert!(
        build.len() == 1
            && build[0].contains(&version)
            && build[0].contains(&toolset)
            && build[0].ends_with(" 1"),
        "{build:?}"
    );

    // No call has been made: each tool's ok series is there, at zero.
    let calls = samples(&text, "dms_bridge_tool_calls_total");
    assert_eq!(calls.len(), dms_bridge::tools::TOOLS.len(), "{calls:#?}");
    assert!(
        calls
            .iter()
            .all(|l| l.contains("outcome=\"ok\"") && l.ends_with(" 0")),
        "{calls:#?}"
    );
    for upstream in [
        "crm-riverside",
        "activix-capitol",
        "jdpower",
        "xtime-riverside",
    ] {
        let line =
            format!("dms_bridge_upstream_requests_total{{upstream=\"{upstream}\",outcome=\"ok\"}}");
        assert!(text.contains(&line), "no {line}");
    }
    for status in ["received", "duplicate", "merged", "replayed"] {
        let line = format!("dms_bridge_leads_total{{status=\"{status}\"}} 0");
        assert!(text.contains(&line), "no {line}");
    }
    let lead_intakes = samples(&text, "dms_bridge_lead_delivery_attempts_total");
    assert!(
        lead_intakes.iter().any(
            |l| l.contains("upstream=\"crm-riverside\"") && l.contains("outcome=\"delivered\"")
        ),
        "{lead_intakes:?}"
    );
    // Cache lookups are counted for the tools the pipeline caches, and only those.
    let cache = samples(&text, "dms_bridge_cache_lookups_total");
    assert!(!cache.is_empty(), "no cache series");
    for line in &cache {
        let tool = line
            .split("tool=\"")
            .nth(1)
            .and_then(|t| t.split('"').next())
            .unwrap();
        let id = dms_bridge::tools::ToolId::from_name(tool).unwrap();
        assert!(id.cacheable(), "{tool} is never cached: {line}");
    }
    let webhooks = samples(&text, "dms_bridge_webhook_deliveries_total");
    assert!(
        webhooks
            .iter()
            .any(|l| l.contains("endpoint=\"demo-receiver\"")),
        "{webhooks:?}"
    );

    let rss: f64 = samples(&text, "process_resident_memory_bytes")[0]
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rss > 1_000_000.0, "resident memory {rss}");
    assert!(text.trim_end().ends_with("# EOF"), "one EOF at the end");
    assert_eq!(text.matches("# EOF").count(), 1);
}

/// The metric names in a PromQL expression (identifiers followed by `{`, `[`
/// or `)` that name a bridge or process series).
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut word = String::new();
    for c in expr.chars().chain([' ']) {
        if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
            word.push(c);
            continue;
        }
        if word.starts_with("dms_bridge_") || word.starts_with("process_") {
            names.push(word.clone());
        }
        word.clear();
    }
    names
}

/// Every PromQL expression of `deploy/grafana/dms-bridge.json`.
fn dashboard_exprs() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/grafana/dms-bridge.json"
    );
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut found = Vec::new();
    exprs(&dashboard, &mut found);
    found
}

/// Every PromQL expression of a dashboard: each panel target's `expr`, and the
/// query of each `query` variable (Grafana's `label_values(metric, label)`).
fn exprs(dashboard: &Value, out: &mut Vec<String>) {
    panel_exprs(&dashboard["panels"], out);
    let variables = dashboard["templating"]["list"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for variable in variables.iter().filter(|v| v["type"] == "query") {
        let query = &variable["query"];
        let text = query.as_str().or_else(|| query["query"].as_str());
        out.extend(text.map(str::to_owned));
    }
}

fn panel_exprs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("expr", Value::String(s)) => out.push(s.clone()),
                    _ => panel_exprs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| panel_exprs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_grafana_dashboard_reads_only_series_the_bridge_exports() {
    let found = dashboard_exprs();
    assert!(
        found.len() >= 20,
        "only {} expressions in the dashboard",
        found.len()
    );

    let bridge = common::demo().await;
    let text = common::metrics_text(&bridge).await;
    let exported: BTreeSet<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();
    let mut unknown = BTreeSet::new();
    let mut used = BTreeSet::new();
    for expr in &found {
        for name in metric_names(expr) {
            if exported.contains(name.as_str()) {
                used.insert(name);
            } else {
                unknown.insert(format!("{name} (in {expr})"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "the dashboard reads series the bridge does not export: {unknown:#?}"
    );
    // The dashboard covers calls, upstreams, leads, the mirror, webhooks and the process.
    for family in [
        "dms_bridge_tool_calls_total",
        "dms_bridge_upstream_requests_total",
        "dms_bridge_lead_delivery_attempts_total",
        "dms_bridge_mirror_units",
        "dms_bridge_webhook_undelivered_events",
        "process_resident_memory_bytes",
    ] {
        assert!(used.contains(family), "the dashboard never reads {family}");
    }
}

#[tokio::test]
async fn debug_logging_shows_the_bridge_not_its_libraries() {
    let addr = free_addr();
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("stderr.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
        .args([
            "--log-format",
            "json",
            "demo",
            "--listen",
            &addr.to_string(),
        ])
        .env("DMS_BRIDGE_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let ready = format!("http://{addr}/readyz");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !common::http_get(&ready)
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the demo never got ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Calls that reach the store (the audit, a lead) and an upstream over HTTP.
    let client = connect(&format!("http://{addr}/mcp"), Some("demo-token-group")).await;
    let search = json!({"dealership_id": "demo-cdk", "limit": 2});
    ok(&call(&client, "inventory.search", search).await);
    ok(&call(&client, "dealership.list", json!({})).await);
    client.cancel().await.unwrap();
    // Log lines are written by a background thread: wait until both calls'
    // lines are out (bounded), whatever the machine's speed.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let text = loop {
        let text = std::fs::read_to_string(&log_path).unwrap();
        if text.matches("\"Tool call.\"").count() >= 2 || tokio::time::Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    child.kill().await.unwrap();

    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let target = |l: &Value| l["target"].as_str().unwrap_or_default().to_owned();
    let level = |l: &Value| l["level"].as_str().unwrap_or_default().to_owned();
    assert!(
        lines
            .iter()
            .any(|l| level(l) == "DEBUG" && target(l).starts_with("dms_bridge")),
        "no debug line of the bridge in\n{text}"
    );
    assert!(
        lines.iter().any(|l| l["message"] == "Tool call."),
        "no tool call logged in\n{text}"
    );
    let noisy: Vec<String> = lines
        .iter()
        .filter(|l| matches!(level(l).as_str(), "DEBUG" | "TRACE"))
        .map(target)
        .filter(|t| !t.starts_with("dms_bridge"))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(noisy.is_empty(), "library debug lines from {noisy:?}");
}

/// A throwaway Prometheus (Debian's `prometheus` package, installed by
/// `scripts/test.sh`) scraping `target` every second; killed when dropped.
struct Prometheus {
    url: String,
    _dir: tempfile::TempDir,
    _child: tokio::process::Child,
}

impl Prometheus {
    async fn scraping(target: std::net::SocketAddr) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        let scrape = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: dms-bridge\n    static_configs:\n      - targets: ['{target}']\n"
        );
        std::fs::write(&config, scrape).unwrap();
        let addr = free_addr();
        let child = tokio::process::Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("prometheus on PATH (scripts/test.sh installs Debian's package)");
        Self {
            url: format!("http://{addr}"),
            _dir: dir,
            _child: child,
        }
    }

    /// One instant query: `Ok(result)` or the error Prometheus gave.
    async fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
        let response = reqwest::Client::new()
            .get(format!("{}/api/v1/query", self.url))
            .query(&[("query", expr)])
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let body: Value = response.json().await.map_err(|e| e.to_string())?;
        match body["status"].as_str() {
            Some("success") => Ok(body["data"]["result"]
                .as_array()
                .cloned()
                .unwrap_or_default()),
            _ => Err(format!("{} {}", body["errorType"], body["error"])),
        }
    }

    /// Waits until the bridge has been scraped at least `samples` times.
    async fn wait_for_samples(&self, samples: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let count = self
                .query("count_over_time(up{job=\"dms-bridge\"}[1m])")
                .await
                .ok()
                .and_then(|r| {
                    r.first()
                        .and_then(|s| s["value"][1].as_str().map(str::to_owned))
                })
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0);
            let up = self
                .query("up{job=\"dms-bridge\"} == 1")
                .await
                .is_ok_and(|r| !r.is_empty());
            if up && count >= samples as f64 {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "Prometheus never scraped the bridge"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// An expression as Grafana would send it with every variable at "All".
fn as_grafana_sends_it(expr: &str) -> String {
    // One minute holds the four scrapes `wait_for_samples` waited for, however
    // far apart a loaded machine spaced them.
    expr.replace("$__rate_interval", "1m")
        .replace("$__range", "1m")
        .replace("$instance", ".*")
        .replace("$dealership", ".*")
        .replace("$upstream", ".*")
}

#[tokio::test]
async fn every_dashboard_query_answers_on_a_real_prometheus_scraping_the_demo() {
    let found = dashboard_exprs();

    let bridge = common::demo().await;
    // One ok call and one refused call, so both kinds of outcome have series.
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    ok(&call(
        &client,
        "inventory.search",
        json!({"dealership_id": "demo-cdk", "limit": 1}),
    )
    .await);
    let refused = call(
        &client,
        "inventory.search",
        json!({"dealership_id": "nowhere"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    let prometheus = Prometheus::scraping(bridge.addr).await;
    prometheus.wait_for_samples(4).await;

    let mut failures = Vec::new();
    let mut empty = Vec::new();
    for expr in &found {
        // Variable queries are Grafana's `label_values(metric, label)`.
        if let Some(inner) = expr
            .strip_prefix("label_values(")
            .and_then(|e| e.strip_suffix(')'))
        {
            let (metric, label) = inner.split_once(',').unwrap();
            match prometheus.query(metric.trim()).await {
                Ok(series) if series.iter().any(|s| s["metric"][label.trim()].is_string()) => {}
                Ok(_) => empty.push(expr.clone()),
                Err(e) => failures.push(format!("{expr}: {e}")),
            }
            continue;
        }
        match prometheus.query(&as_grafana_sends_it(expr)).await {
            Ok(series) if series.is_empty() => empty.push(expr.clone()),
            Ok(_) => {}
            Err(e) => failures.push(format!("{expr}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "queries Prometheus refused: {failures:#?}"
    );
    assert!(
        empty.is_empty(),
        "queries with no series on a scraped demo: {empty:#?}"
    );
}

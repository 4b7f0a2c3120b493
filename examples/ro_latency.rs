//! Repair-order lookup through CDK Drive's long-operation flow, for
//! BENCHMARKS.md. Starts the demo's CDK mock (each query: start, status
//! `received` with "check again in 1 s", then `complete`, then the result) and
//! a bridge in this process, both on loopback, then times SAMPLES lookups of
//! one open order three ways, one at a time:
//!
//! - direct: a client doing the flow by hand (token once, then start, wait as
//!   advised, poll, wait, poll, fetch), the floor for anyone calling CDK;
//! - bridge: `service.get_repair_order` with the bridge keeping nothing
//!   (profile `keep_seconds = 0`, tool cache off), so every call runs the flow;
//! - bridge, kept: the built-in profile (answers kept 30 s), after a first call.
//!
//! Prints one JSON line: per way p50/p90/max in ms and the HTTP requests the
//! mock received per lookup.
//!
//!     cargo run --release --example ro_latency -- 20
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::middleware::{self, Next};
use dms_bridge_testkit::mock_cdk;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const DRIVE: &str = "/cdk/drive/servicerepairorder/v1";

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// The demo CDK mock, counting the requests it answers.
async fn mock(count: Arc<AtomicUsize>) -> String {
    let app = mock_cdk::router(Duration::ZERO).layer(middleware::from_fn(
        move |req: Request, next: Next| {
            count.fetch_add(1, Ordering::Relaxed);
            next.run(req)
        },
    ));
    serve(app).await
}

fn config(upstream: &str, profile: &str, cache: bool) -> String {
    format!(
        r#"
[cache]
enabled = {cache}

[[dealerships]]
id = "bench"
name = "Bench Motors"
timezone = "America/Chicago"
address = {{ line1 = "1 Main St", city = "Austin", region = "TX", postal_code = "78701", country = "US" }}
routes = {{ repair_orders = "cdk" }}

[upstreams.cdk]
kind = "rest"
profile = "{profile}"
base_url = "{upstream}/cdk"
token_url = "{upstream}/oauth2/token"
client_id = {{ value = "{id}" }}
client_secret = {{ value = "{secret}" }}
vars = {{ subscription_id = "{sub}" }}
timeout = "10s"

[[tokens]]
name = "bench"
secret = {{ value = "bench-token" }}
dealerships = ["bench"]
scopes = ["amcp:service:read"]
"#,
        id = mock_cdk::CLIENT_ID,
        secret = mock_cdk::CLIENT_SECRET,
        sub = mock_cdk::SUBSCRIPTION_ID,
    )
}

/// The flow by hand, as a careful direct client would run it.
async fn direct(http: &reqwest::Client, base: &str, token: &str) -> Value {
    let get = |path: String| {
        http.get(format!("{base}{path}"))
            .bearer_auth(token)
            .header("Subscription-Id", mock_cdk::SUBSCRIPTION_ID)
            .header("Request-Id", uuid::Uuid::new_v4().to_string())
    };
    let mut answer: Value = get(format!("{DRIVE}/open"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = answer["operationId"].as_str().unwrap().to_owned();
    while answer["status"] != "complete" {
        let wait = answer["checkStatusAfterSeconds"].as_f64().unwrap_or(1.0);
        tokio::time::sleep(Duration::from_secs_f64(wait)).await;
        answer = get(format!("{DRIVE}/long-operations/{id}/status"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    }
    let result: Value = get(format!("{DRIVE}/long-operations/{id}/result"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    result["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["roNumber"] == "60102")
        .unwrap()
        .clone()
}

fn summary(mut ms: Vec<f64>, requests: f64) -> Value {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1];
    json!({ "p50_ms": at(0.5), "p90_ms": at(0.9), "max_ms": at(1.0), "requests_per_lookup": requests })
}

/// The bridge of `toml` on an in-memory store: its MCP URL.
async fn bridge(toml: &str) -> String {
    let (base, path) = support::start_bridge(toml, Some("sqlite::memory:")).await;
    format!("{base}{path}")
}

#[tokio::main]
async fn main() {
    dms_bridge::net::install_tls_provider();
    let samples: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let count = Arc::new(AtomicUsize::new(0));
    let upstream = mock(count.clone()).await;
    let http = dms_bridge::net::client_builder()
        .build()
        .unwrap_or_default();
    let token: Value = http
        .post(format!("{upstream}/oauth2/token"))
        .basic_auth(mock_cdk::CLIENT_ID, Some(mock_cdk::CLIENT_SECRET))
        .form(&[("grant_type", "client_credentials"), ("scope", "anonymous")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["access_token"].as_str().unwrap().to_owned();

    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("cdk-keep-nothing.toml");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/adapters/cdk-fortellis.toml"
    ))
    .unwrap()
    .replace(
        "closed_lookback_days = 90",
        "closed_lookback_days = 90\nkeep_seconds = 0",
    );
    std::fs::write(&profile, text).unwrap();
    let fresh = bridge(&config(&upstream, &profile.to_string_lossy(), false)).await;
    let kept = bridge(&config(&upstream, "cdk-fortellis", false)).await;

    let client = |url: String| async move {
        let config = StreamableHttpClientTransportConfig::with_uri(url)
            .auth_header("bench-token".to_owned());
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .unwrap()
    };
    let args = json!({ "dealership_id": "bench", "ro_number": "60102" })
        .as_object()
        .unwrap()
        .clone();
    let mut results: BTreeMap<&str, Value> = BTreeMap::new();

    let mut times = Vec::new();
    let before = count.load(Ordering::Relaxed);
    for _ in 0..samples {
        let start = Instant::now();
        let ro = direct(&http, &upstream, &token).await;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(ro["roNumber"], "60102");
    }
    let per = (count.load(Ordering::Relaxed) - before) as f64 / samples as f64;
    results.insert("direct", summary(times, per));

    for (name, url) in [("bridge", fresh), ("bridge_kept", kept)] {
        let mcp = client(url).await;
        let call = || {
            mcp.call_tool(
                CallToolRequestParams::new("service_get_repair_order").with_arguments(args.clone()),
            )
        };
        call().await.unwrap(); // token fetch and connection set-up, not timed
        let before = count.load(Ordering::Relaxed);
        let mut times = Vec::new();
        for _ in 0..samples {
            let start = Instant::now();
            let result = call().await.unwrap();
            times.push(start.elapsed().as_secs_f64() * 1e3);
            assert_ne!(result.is_error, Some(true), "{result:?}");
        }
        let per = (count.load(Ordering::Relaxed) - before) as f64 / samples as f64;
        results.insert(name, summary(times, per));
    }
    println!("{}", json!({ "samples": samples, "results": results }));
}

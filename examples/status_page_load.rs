//! The status page's render time with many failed leads, for BENCHMARKS.md.
//! Starts a bridge in this process on a SQLite file, with a CRM on loopback
//! that refuses every lead and one delivery attempt per lead; takes one lead
//! through `leads.create` until its delivery is `failed`, copies its rows in
//! the store to LEADS failed leads in all, then times SAMPLES `GET /status`
//! (operator bearer token, one at a time, over loopback HTTP). Prints one
//! JSON line: p50/p90/max in ms, the page's size and the leads it lists.
//!
//!     cargo run --release --example status_page_load -- 10000 50
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::call;

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

const OPERATOR: &str = "bench-operator-token-0123456789";

/// A CRM intake that answers every lead with 500.
async fn refusing_crm() -> String {
    support::crm(
        axum::Router::new()
            .fallback(|| async { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "down") }),
    )
    .await
}

fn config(crm: &str, store: &str) -> String {
    let dealership = support::bench_dealership(crm);
    format!(
        r#"
[leads]
delivery = {{ max_attempts = 1, base_delay = "50ms", max_delay = "100ms" }}

[store]
url = "{store}"

[status]
operator_token = {{ value = "{OPERATOR}" }}

{dealership}"#
    )
}

/// One lead taken and failed through the real path; its id.
async fn failed_lead(base: &str) -> String {
    dms_bridge::net::install_tls_provider();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp"))
            .auth_header("bench-token"),
    );
    let client = ().serve(transport).await.unwrap();
    let lead = json!({
        "dealership_id": "bench",
        "customer": { "first_name": "Dana", "last_name": "Whitfield", "email": "dana@example.com", "preferred_contact": "email" },
        "consent": {
            "granted_at": (chrono::Utc::now() - chrono::Duration::minutes(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "allowed_channels": ["email"],
            "consent_text": "I agree that the dealership may contact me about my request by the channels I picked.",
            "scope": ["lead_submission"],
            "source_agent": "bench"
        },
        "vehicle_of_interest": { "year": 2021, "make": "Honda", "model": "Civic", "condition": "used" },
        "source_agent": "bench"
    });
    let lead_id = call(&client, "leads.create", lead).await["lead_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let view = call(
            &client,
            "leads.get",
            json!({ "dealership_id": "bench", "lead_id": lead_id }),
        )
        .await;
        if view["delivery"]["state"] == "failed" {
            return lead_id;
        }
        assert!(Instant::now() < deadline, "the lead never failed: {view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Copies the failed lead's rows until `total` leads have failed.
async fn clone_failed(db: &std::path::Path, lead_id: &str, total: u32) {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let copies = i64::from(total.saturating_sub(1));
    // The recursive count starts at 1: with nothing to copy, copy nothing.
    let statements = if copies == 0 { &[][..] } else { &CLONE_SQL[..] };
    for &sql in statements {
        sqlx::query(sql)
            .bind(lead_id)
            .bind(copies)
            .execute(&pool)
            .await
            .unwrap();
    }
    let failed: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM lead_deliveries WHERE state = 'failed'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(failed, i64::from(total));
}

/// Copies of one lead and its delivery, `$2` of them, ids suffixed.
const CLONE_SQL: [&str; 2] = [
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
     INSERT INTO leads (lead_id, dealership, created_at, fingerprint, source_agent, request, appointment)
     SELECT l.lead_id || '-' || n.i, l.dealership, l.created_at, l.fingerprint || n.i, l.source_agent, l.request, l.appointment
     FROM leads l, n WHERE l.lead_id = $1",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
     INSERT INTO lead_deliveries (lead_id, upstream, channel, document, traceparent, state, attempts,
         next_attempt_at, lease_until, last_attempt_at, last_error, delivered_at, receipt)
     SELECT d.lead_id || '-' || n.i, d.upstream, d.channel, d.document, d.traceparent, d.state, d.attempts,
         d.next_attempt_at, d.lease_until, d.last_attempt_at, d.last_error, d.delivered_at, d.receipt
     FROM lead_deliveries d, n WHERE d.lead_id = $1",
];

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let leads: u32 = args.next().map_or(10_000, |a| a.parse().unwrap());
    let samples: usize = args.next().map_or(50, |a| a.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bridge.db");
    let crm = refusing_crm().await;
    let (base, _) =
        support::start_bridge(&config(&crm, &format!("sqlite://{}", db.display())), None).await;
    let lead_id = failed_lead(&base).await;
    clone_failed(&db, &lead_id, leads).await;

    let http = reqwest::Client::new();
    let get = || async {
        let started = Instant::now();
        let answer = http
            .get(format!("{base}/status"))
            .bearer_auth(OPERATOR)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let body = answer.text().await.unwrap();
        (started.elapsed().as_secs_f64() * 1e3, body)
    };
    for _ in 0..3 {
        get().await;
    }
    let mut times = Vec::with_capacity(samples);
    let mut last = String::new();
    for _ in 0..samples {
        let (ms, body) = get().await;
        times.push(ms);
        last = body;
    }
    times.sort_by(f64::total_cmp);
    let listed = last.matches("<tr id=\"lead-").count();
    assert!(
        last.contains(&format!("dead {leads}")),
        "the page counts every failed lead"
    );
    println!(
        "{}",
        json!({
            "failed_leads": leads,
            "samples": samples,
            "p50_ms": (percentile(&times, 0.5) * 100.0).round() / 100.0,
            "p90_ms": (percentile(&times, 0.9) * 100.0).round() / 100.0,
            "max_ms": (times[times.len() - 1] * 100.0).round() / 100.0,
            "page_bytes": last.len(),
            "leads_listed": listed,
        })
    );
}

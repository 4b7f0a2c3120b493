//! The customer data lifecycle's costs, for BENCHMARKS.md (issue 34):
//!
//! - `calls`: `leads.create` and `leads.get` through rmcp's client against a
//!   bridge started in this process (SQLite file, a CRM on loopback that
//!   takes every lead), with customer data sealed and in the clear, side by
//!   side; SAMPLES calls of each, one at a time, after 20 unmeasured; and the
//!   store's bytes per lead (the text of `leads`, `lead_submissions` and
//!   `lead_deliveries`, over the leads stored).
//! - `store URL`: the purge and the erasure on that store (a SQLite file or
//!   PostgreSQL): LEADS leads seeded straight into the store, old enough for
//!   every retention, then minimised (`[retention] leads`), then deleted
//!   (`consent_grants`), each timed to its end in batches of 500; then one
//!   customer with LEADS leads erased in one transaction. Rows per second
//!   count every row removed or rewritten (a lead, its submission, its
//!   delivery, its `lead.created` event).
//!
//! Usage:
//!
//! ```text
//! cargo run --release --example data_lifecycle_load -- calls 300
//! cargo run --release --example data_lifecycle_load -- store sqlite:///tmp/x.db 10000
//! cargo run --release --example data_lifecycle_load -- store postgres://… 10000
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::call;

use std::time::{Duration, Instant};

use chrono::Utc;
use dms_bridge::store::Store;
use dms_bridge::store::erasure::Subject;
use dms_bridge::store::sealing::{Keyring, Sealing};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const KEY: &str = "3131313131313131313131313131313131313131313131313131313131313131";

async fn accepting_crm() -> String {
    support::crm(axum::Router::new().fallback(|| async { "ok" })).await
}

fn config(crm: &str, store: &str, sealed: bool) -> String {
    let encryption = if sealed {
        format!("[store.encryption]\ncurrent = \"k\"\nkeys = {{ k = {{ value = \"{KEY}\" }} }}\n")
    } else {
        String::new()
    };
    let dealership = support::bench_dealership(crm);
    format!(
        r#"
[rate_limits]
per_token = {{ requests = 1000000, per = "1m" }}
per_class = {{ write = {{ requests = 1000000, per = "1m" }} }}

[store]
url = "{store}"
{encryption}
{dealership}"#
    )
}

fn lead(run: &str, n: usize) -> Value {
    json!({
        "dealership_id": "bench",
        "customer": {
            "first_name": "Dana", "last_name": "Whitfield",
            "email": format!("dana-{run}-{n}@example.com"), "phone": "+15125550188",
            "preferred_contact": "email",
            "address": { "address_line_1": "1418 Larkspur Lane", "city": "Springfield", "state": "IL", "zip": "62704" }
        },
        "consent": {
            "granted_at": (Utc::now() - chrono::Duration::minutes(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "allowed_channels": ["email", "sms"],
            "consent_text": "I agree that the dealership may contact me about my request by the channels I picked.",
            "scope": ["lead_submission"],
            "source_agent": "bench"
        },
        "vehicle_of_interest": { "year": 2021, "make": "Honda", "model": "Civic", "condition": "used" },
        "message": "Is it still available? I can come by on Saturday morning.",
        "source_agent": "bench"
    })
}

fn p50(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(|a, b| a.total_cmp(b));
    let p = ms[ms.len() / 2];
    (p * 1000.0).round() / 1000.0
}

/// `leads.create` and `leads.get` p50, and bytes per lead, sealed or not.
async fn calls(samples: usize, sealed: bool) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bridge.db").display());
    let (base, path) =
        support::start_bridge(&config(&accepting_crm().await, &url, sealed), None).await;
    let mcp = format!("{base}{path}");
    dms_bridge::net::install_tls_provider();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(mcp).auth_header("bench-token"),
    );
    let client = ().serve(transport).await.unwrap();
    let run = if sealed { "sealed" } else { "plain" };
    let mut ids = Vec::new();
    let (mut create, mut get) = (Vec::new(), Vec::new());
    for n in 0..samples + 20 {
        let started = Instant::now();
        let answer = call(&client, "leads.create", lead(run, n)).await;
        let took = started.elapsed().as_secs_f64() * 1000.0;
        if n >= 20 {
            create.push(took);
        }
        ids.push(answer["lead_id"].as_str().unwrap().to_owned());
    }
    for (n, id) in ids.iter().enumerate() {
        let started = Instant::now();
        call(
            &client,
            "leads.get",
            json!({ "dealership_id": "bench", "lead_id": id }),
        )
        .await;
        if n >= 20 {
            get.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let store = Store::open(&url).await.unwrap();
    let bytes: i64 = sqlx::query_scalar(
        "SELECT (SELECT SUM(LENGTH(request) + LENGTH(fingerprint) + COALESCE(LENGTH(identity), 0)
                   + COALESCE(LENGTH(contact_email), 0) + COALESCE(LENGTH(contact_phone), 0)) FROM leads)
              + (SELECT SUM(LENGTH(consent)) FROM lead_submissions)
              + (SELECT SUM(LENGTH(document)) FROM lead_deliveries)",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    json!({
        "run": format!("calls_{run}"), "samples": samples,
        "create_p50_ms": p50(create), "get_p50_ms": p50(get),
        "customer_bytes_per_lead": bytes / ids.len() as i64,
    })
}

fn keys() -> Sealing {
    let keys = [("k".to_owned(), dms_bridge::config::key_bytes(KEY).unwrap())].into();
    Sealing::new(Some(Keyring::new("k", &keys).unwrap()))
}

/// Seeds `n` leads of `bench`, `days` old, delivered, all with e-mail `email` when given.
async fn seed(store: &Store, n: usize, days: i64, email: Option<&str>) {
    let at = Utc::now() - chrono::Duration::days(days);
    for i in 0..n {
        let mut args = lead("seed", i);
        if let Some(e) = email {
            args["customer"]["email"] = json!(e);
        }
        let lead: dms_bridge::leads::lead::Lead = serde_json::from_value(args.clone()).unwrap();
        let new = dms_bridge::store::leads::NewLead {
            lead_id: dms_bridge::leads::new_lead_id(),
            submission_id: uuid::Uuid::new_v4().simple().to_string(),
            dealership: "bench".into(),
            principal: "bench".into(),
            now: at,
            duplicate_since: Utc::now() + chrono::Duration::days(1),
            identity: dms_bridge::leads::customer_identity("bench", &lead),
            source_agent: "bench".into(),
            request: lead.to_stored().unwrap(),
            appointment: None,
            consent: serde_json::to_string(&lead.consent).unwrap(),
            upstream: "crm".into(),
            channel: "adf_http".into(),
            document: format!("<adf>{}</adf>", args["customer"]),
            traceparent: None,
        };
        dms_bridge::store::leads::accept(store, &new).await.unwrap();
    }
    sqlx::query("UPDATE lead_deliveries SET state = 'delivered', delivered_at = $1 WHERE delivered_at IS NULL")
        .bind(dms_bridge::store::ts(at))
        .execute(store.pool())
        .await
        .unwrap();
}

/// Times `step` (one batch, returning what it did) until a batch does less than 500.
async fn timed<F, Fut>(mut step: F) -> (u64, Duration)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    let started = Instant::now();
    let mut total = 0;
    loop {
        let done = step().await;
        total += done;
        if done < 500 {
            return (total, started.elapsed());
        }
    }
}

fn rate(rows: u64, took: Duration) -> f64 {
    (rows as f64 / took.as_secs_f64()).round()
}

async fn store_run(url: &str, n: usize) -> Value {
    use dms_bridge::store::retention;
    let store = Store::open(url)
        .await
        .unwrap()
        .sealed(keys())
        .await
        .unwrap();
    seed(&store, n, 2000, None).await;
    let far = Utc::now() - chrono::Duration::days(1000);
    let minimise = |r: &str| dms_bridge::lifecycle::minimise(r);
    let (minimised, minimise_took) = timed(|| async {
        retention::minimise_leads(&store, far, 500, &minimise)
            .await
            .unwrap()
    })
    .await;
    let (deleted, delete_took) =
        timed(|| async { retention::consent_grants(&store, far, 500).await.unwrap() }).await;
    seed(&store, n, 1, Some("erase-me@example.com")).await;
    let subject = Subject {
        email: Some("erase-me@example.com".into()),
        ..Subject::default()
    };
    let started = Instant::now();
    let report = dms_bridge::lifecycle::erase::erase(&store, &subject, "bench", None, false)
        .await
        .unwrap();
    let erase_took = started.elapsed();
    let erased: u64 = report.erased.unwrap().values().sum();
    // Minimising rewrites a lead and deletes its delivery and event (3 rows);
    // deleting removes the lead and its submission (2 rows).
    json!({
        "run": "store", "dialect": format!("{:?}", store.dialect()), "leads": n,
        "minimise_leads_per_s": rate(minimised, minimise_took), "minimise_rows_per_s": rate(minimised * 3, minimise_took),
        "minimise_s": minimise_took.as_secs_f64(),
        "delete_leads_per_s": rate(deleted, delete_took), "delete_rows_per_s": rate(deleted * 2, delete_took),
        "delete_s": delete_took.as_secs_f64(),
        "erase_rows": erased, "erase_rows_per_s": rate(erased, erase_took), "erase_s": erase_took.as_secs_f64(),
    })
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("calls") => {
            let samples = args.get(1).map_or(300, |a| a.parse().unwrap());
            for sealed in [false, true] {
                println!("{}", calls(samples, sealed).await);
            }
        }
        Some("store") => {
            let url = args.get(1).expect("a store URL");
            let n = args.get(2).map_or(10_000, |a| a.parse().unwrap());
            println!("{}", store_run(url, n).await);
        }
        _ => eprintln!("usage: data_lifecycle_load calls [SAMPLES] | store URL [LEADS]"),
    }
}

//! Lead delivery latency for BENCHMARKS.md: sends COUNT `leads.create` calls
//! paced at RATE_PER_SEC (each in its own task, so a slow answer does not delay
//! the pace), notes the wall-clock instant each answer arrived, then polls the
//! demo CRM's `/adf/received` until every accepted lead is there (at most 120 s)
//! and prints one JSON line. Accept → delivery is the CRM's `received_at` minus
//! that instant: same machine, same clock, both UTC.
//!
//!     cargo run --release --example lead_latency -- \
//!         http://127.0.0.1:8790/mcp http://127.0.0.1:PORT/adf/received 5 150

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const TOKEN: &str = "demo-token-cdk";
const DELIVERY_DEADLINE: Duration = Duration::from_secs(120);

/// One accepted lead: its id, how long the call took, when its answer arrived.
struct Accepted {
    lead_id: String,
    create_ms: f64,
    answered_at: DateTime<Utc>,
}

fn lead(run: &str, n: usize) -> Value {
    json!({
        "dealership_id": "demo-cdk",
        "customer": {"first_name": "Dana", "last_name": "Whitfield",
            "email": format!("dana-{run}-{n}@example.com"), "phone": "+15125550188",
            "preferred_contact": "email"},
        "consent": {"granted_at": "2026-01-01T00:00:00Z", "allowed_channels": ["email", "sms"],
            "consent_text": "I agree to be contacted about my request.",
            "scope": ["lead_submission"]},
        "vehicle_of_interest": {"year": 2021, "make": "Honda", "model": "Civic", "condition": "used"},
        "message": "Is it still available?",
        "source_agent": "bench"
    })
}

/// Nearest-rank percentile of sorted values.
fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn round3(v: f64) -> Value {
    if v.is_finite() {
        json!((v * 1000.0).round() / 1000.0)
    } else {
        Value::Null
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    dms_bridge::net::install_tls_provider();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mcp_url, crm_url, rate, count] = args.as_slice() else {
        bail!("usage: lead_latency MCP_URL CRM_RECEIVED_URL RATE_PER_SEC COUNT");
    };
    let rate: f64 = rate.parse().context("RATE_PER_SEC")?;
    let count: usize = count.parse().context("COUNT")?;
    if rate <= 0.0 {
        bail!("RATE_PER_SEC must be positive");
    }

    let config = StreamableHttpClientTransportConfig::with_uri(mcp_url.clone()).auth_header(TOKEN);
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await?;
    let run = Utc::now().timestamp_millis().to_string();

    // Paced sends: one task per lead, started every 1/rate s.
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    let mut tasks = Vec::with_capacity(count);
    for n in 0..count {
        ticker.tick().await;
        let peer = client.peer().clone();
        let Value::Object(map) = lead(&run, n) else {
            bail!("lead arguments must be an object");
        };
        tasks.push(tokio::spawn(async move {
            let started = Instant::now();
            let result = peer
                .call_tool(CallToolRequestParams::new("leads_create").with_arguments(map))
                .await;
            let answered_at = Utc::now();
            let create_ms = started.elapsed().as_secs_f64() * 1000.0;
            let sc = result
                .map_err(|e| format!("tools/call: {e}"))?
                .structured_content
                .ok_or("no structuredContent")?;
            match (sc["status"].as_str(), sc["lead_id"].as_str()) {
                (Some("received"), Some(id)) => Ok(Accepted {
                    lead_id: id.to_owned(),
                    create_ms,
                    answered_at,
                }),
                _ => Err(format!("unexpected answer: {sc}")),
            }
        }));
    }
    let mut accepted = Vec::with_capacity(count);
    let mut failed = 0;
    for task in tasks {
        match task.await? {
            Ok(a) => accepted.push(a),
            Err(e) => {
                failed += 1;
                if failed <= 3 {
                    eprintln!("lead_latency: {e}");
                }
            }
        }
    }

    // Poll the CRM until every accepted lead has arrived, or give up.
    let http = dms_bridge::net::client_builder().build()?;
    let deadline = Instant::now() + DELIVERY_DEADLINE;
    let mut received: HashMap<String, DateTime<Utc>> = HashMap::new();
    // Ends with the intake's counts of requests and of dropped duplicates.
    let crm = loop {
        let body: Value = http
            .get(crm_url)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        for l in body["leads"].as_array().into_iter().flatten() {
            if let (Some(id), Some(at)) = (l["adf_id"].as_str(), l["received_at"].as_str()) {
                let at = DateTime::parse_from_rfc3339(at).context("received_at")?;
                received.insert(id.to_owned(), at.with_timezone(&Utc));
            }
        }
        let counts = (body["requests"].clone(), body["duplicates_dropped"].clone());
        let missing = accepted
            .iter()
            .filter(|a| !received.contains_key(&a.lead_id))
            .count();
        if missing == 0 {
            break counts;
        }
        if Instant::now() >= deadline {
            eprintln!(
                "lead_latency: gave up after {DELIVERY_DEADLINE:?}: {missing} lead(s) missing"
            );
            break counts;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    client.cancel().await?;

    let mut create: Vec<f64> = accepted.iter().map(|a| a.create_ms).collect();
    let mut delivery: Vec<f64> = accepted
        .iter()
        .filter_map(|a| {
            let at = received.get(&a.lead_id)?;
            Some((*at - a.answered_at).num_microseconds()? as f64 / 1000.0)
        })
        .collect();
    create.sort_by(f64::total_cmp);
    delivery.sort_by(f64::total_cmp);
    // Written by hand so the fields keep this order.
    let f = |v: f64| round3(v).to_string();
    println!(
        "{{\"run\":\"lead_delivery_latency\",\"rate\":{rate},\"count\":{count},\
         \"accepted\":{},\"delivered\":{},\"create_p50_ms\":{},\"create_p99_ms\":{},\
         \"accept_to_delivery_p50_ms\":{},\"p90\":{},\"p99\":{},\"min_ms\":{},\"max_ms\":{},\
         \"crm_requests\":{},\"crm_duplicates_dropped\":{}}}",
        accepted.len(),
        delivery.len(),
        f(pct(&create, 50.0)),
        f(pct(&create, 99.0)),
        f(pct(&delivery, 50.0)),
        f(pct(&delivery, 90.0)),
        f(pct(&delivery, 99.0)),
        f(delivery.first().copied().unwrap_or(f64::NAN)),
        f(delivery.last().copied().unwrap_or(f64::NAN)),
        crm.0,
        crm.1,
    );
    Ok(())
}

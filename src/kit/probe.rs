//! `dms-bridge probe`: a configured upstream, live and read-only. Through a
//! watching proxy in front of each of its origins, it signs in as the
//! profile says, makes one read per domain the dealership routes to it (an
//! inventory search, one day of repair orders, one valuation of a given
//! VIN), and reports the first canonical record, the counts, each exchange's
//! timing and what the upstream's rate-limit headers said. Paths are shown
//! without their query (where API keys can travel); headers and bodies,
//! where credentials travel, are never shown.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use chrono::{Duration as Days, NaiveDate, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::kit::bridge::{Answer, SetupError, Target};
use crate::kit::proxy::{self, Observe, Observed};
use crate::kit::reroute;
use crate::model::Domain;

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub upstream: String,
    pub dealership: Option<String>,
    /// A VIN for one valuation (the deals domain).
    pub vin: Option<String>,
    /// The day of repair orders to read (default: yesterday in the dealership's zone).
    pub day: Option<NaiveDate>,
}

/// One read and what came of it.
#[derive(Debug, Serialize)]
pub struct Read {
    pub domain: &'static str,
    pub tool: &'static str,
    pub outcome: String,
    /// Records in the answer, and `total` where the tool gives one.
    pub count: Option<usize>,
    pub total: Option<u64>,
    pub first: Option<Value>,
    pub millis: u64,
}

/// One exchange with the upstream, as seen by the proxy.
#[derive(Debug, Serialize)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub status: Option<u16>,
    pub millis: u64,
    pub rate_limit: Vec<(String, String)>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub upstream: String,
    pub dealership: String,
    pub reads: Vec<Read>,
    pub exchanges: Vec<Seen>,
    pub skipped: Vec<String>,
}

impl Report {
    pub fn failed(&self) -> bool {
        self.reads.iter().any(|r| r.outcome != "ok")
    }
}

pub async fn run(config: Config, base: &Path, options: &Options) -> Result<Report, SetupError> {
    let target = Target::new(
        config,
        base,
        &options.upstream,
        options.dealership.as_deref(),
    )?;
    let watch = Arc::new(Observe::default());
    let cancel = CancellationToken::new();
    let routes = start_proxies(&target, &watch, &cancel).await;
    let result = match routes {
        Ok(routes) => {
            let upstream = target.upstream.clone();
            let bridge = target
                .start_edited(move |cfg| {
                    reroute::reroute(cfg, &upstream, &routes).map_err(|e| e.to_string())
                })
                .await;
            match bridge {
                Ok(bridge) => {
                    let (reads, skipped) = reads(&bridge, &target, options).await;
                    bridge.stop().await;
                    Ok((reads, skipped))
                }
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    };
    cancel.cancel();
    let (reads, skipped) = result?;
    Ok(Report {
        upstream: target.upstream.clone(),
        dealership: target.dealership.clone(),
        reads,
        exchanges: watch.seen().into_iter().map(seen).collect(),
        skipped,
    })
}

/// A watching proxy per origin of the upstream: origin → the proxy's URL.
async fn start_proxies(
    target: &Target,
    watch: &Arc<Observe>,
    cancel: &CancellationToken,
) -> Result<BTreeMap<String, String>, SetupError> {
    let origins = reroute::origins(target.config(), &target.upstream)
        .map_err(|e| SetupError::Target(e.to_string()))?;
    let mut routes = BTreeMap::new();
    for origin in origins {
        let tap: Arc<dyn proxy::Tap> = watch.clone();
        let listen = SocketAddr::from(([127, 0, 0, 1], 0));
        let running = proxy::start(listen, &origin, tap, cancel.child_token())
            .await
            .map_err(|e| SetupError::Target(e.to_string()))?;
        routes.insert(origin, format!("http://{}", running.addr));
    }
    Ok(routes)
}

async fn reads(
    bridge: &crate::kit::bridge::Bridge,
    target: &Target,
    options: &Options,
) -> (Vec<Read>, Vec<String>) {
    let dealership = target.dealership.as_str();
    let tz = target.timezone().unwrap_or(chrono_tz::UTC);
    let yesterday = Utc::now().with_timezone(&tz).date_naive() - Days::days(1);
    let day = options.day.unwrap_or(yesterday).to_string();
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for domain in &target.domains {
        let (name, tool, args) = match domain {
            Domain::Inventory => (
                "inventory",
                "inventory.search",
                json!({ "dealership_id": dealership, "limit": 1, "response_format": "detailed" }),
            ),
            Domain::RepairOrders => (
                "repair_orders",
                "service.list_repair_orders",
                json!({ "dealership_id": dealership, "from": day, "to": day, "limit": 1,
                        "response_format": "detailed" }),
            ),
            Domain::Deals => match &options.vin {
                Some(vin) => (
                    "deals",
                    "deals.request_trade_value",
                    json!({ "dealership_id": dealership, "vin": vin,
                            "mileage": { "value": 30000, "unit": "mi" } }),
                ),
                None => {
                    skipped.push("deals: give --vin for one valuation".to_owned());
                    continue;
                }
            },
            Domain::Service => {
                // The menu's first code, found as verify finds it, then one week of slots.
                let dealer = crate::kit::verify::canonical::Dealer {
                    id: dealership,
                    timezone: tz,
                    currency: target.currency().unwrap_or("USD"),
                };
                let (_, args) =
                    crate::kit::verify::canonical::service_availability(bridge, &dealer).await;
                match args {
                    Some(args) => ("service", "service.check_availability", args),
                    None => {
                        skipped.push("service: the scheduler gave no service menu".to_owned());
                        continue;
                    }
                }
            }
            Domain::Leads => {
                skipped.push("leads: the probe never sends a lead".to_owned());
                continue;
            }
        };
        out.push(read(bridge, name, tool, args).await);
    }
    (out, skipped)
}

async fn read(
    bridge: &crate::kit::bridge::Bridge,
    domain: &'static str,
    tool: &'static str,
    args: Value,
) -> Read {
    let started = Instant::now();
    let answer = bridge.call_tool(tool, args).await;
    let millis = started.elapsed().as_millis() as u64;
    match answer {
        Answer::Ok(body) => {
            let items = body["items"].as_array();
            let first = match items {
                Some(items) => items.first().cloned(),
                None => Some(body.clone()),
            };
            Read {
                domain,
                tool,
                outcome: "ok".into(),
                count: items.map(Vec::len),
                total: body["total"].as_u64(),
                first,
                millis,
            }
        }
        Answer::Error(envelope) => Read {
            domain,
            tool,
            outcome: envelope["error"]["code"]
                .as_str()
                .unwrap_or("error")
                .to_owned(),
            count: None,
            total: None,
            first: Some(envelope),
            millis,
        },
    }
}

fn seen(observed: Observed) -> Seen {
    // The query is dropped: API keys and signatures travel there.
    let path = observed
        .path
        .split('?')
        .next()
        .unwrap_or_default()
        .to_owned();
    Seen {
        method: observed.method,
        path,
        status: observed.status,
        millis: observed.elapsed.as_millis() as u64,
        rate_limit: observed.rate_limit,
    }
}

impl Report {
    /// The report as a person reads it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "probe upstream {} for dealership {}",
            self.upstream, self.dealership
        );
        for r in &self.reads {
            let counts = match (r.count, r.total) {
                (Some(c), Some(t)) => format!(", {c} shown of {t}"),
                (Some(c), None) => format!(", {c} record(s)"),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "\n{} ({}): {}{counts} in {} ms",
                r.domain, r.tool, r.outcome, r.millis
            );
            if let Some(first) = &r.first {
                let label = if r.outcome == "ok" {
                    "first record"
                } else {
                    "answer"
                };
                let pretty = serde_json::to_string_pretty(first).unwrap_or_default();
                let _ = writeln!(out, "{label}:\n{pretty}");
            }
        }
        let _ = writeln!(out, "\nexchanges with the upstream");
        for e in &self.exchanges {
            let status = e.status.map_or("no answer".to_owned(), |s| s.to_string());
            let _ = writeln!(
                out,
                "  {:<6} {:<60} {status:<9} {} ms",
                e.method, e.path, e.millis
            );
            for (name, value) in &e.rate_limit {
                let _ = writeln!(out, "         {name}: {value}");
            }
        }
        if self.exchanges.iter().all(|e| e.rate_limit.is_empty()) {
            let _ = writeln!(out, "  (no rate-limit headers in any answer)");
        }
        for s in &self.skipped {
            let _ = writeln!(out, "\nnot read: {s}");
        }
        out
    }
}

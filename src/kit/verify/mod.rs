//! `dms-bridge verify`: proves, before go-live, that an upstream answers the
//! canonical contract through its profile and mapping, and that every fault
//! it can have reaches an agent as the right stable error and nothing more.
//!
//! It runs the operator's own config (see `setup` for what it narrows), reads
//! the domains the dealership routes to the upstream, then runs each cell of
//! the fault matrix (`faults`) through a fault front put in place of the
//! upstream's API, on a bridge built fresh for the cell. Nothing is written
//! upstream: the canonical checks only read, and the fault cells never reach
//! the upstream except the expired-token cell's one read.

pub mod canonical;
pub mod faults;
pub mod report;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::config::Config;
pub use crate::kit::bridge::SetupError;
use crate::kit::bridge::{Answer, Target};
use crate::model::Domain;
use faults::{CELLS, Cell, Expected, FaultFront, Format};
use report::{CellResult, Report, Verdict};

/// What to verify, as the command line gives it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub upstream: String,
    pub dealership: Option<String>,
    /// A VIN the valuation provider knows, to verify the `deals` domain.
    pub vin: Option<String>,
    /// Run the canonical checks only.
    pub skip_faults: bool,
    /// A recorded fixture set to replay in place of the upstream.
    pub fixtures: Option<std::path::PathBuf>,
}

/// The upstream timeout inside fault cells, so a slow upstream is found in seconds.
const CELL_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the slow cell's upstream keeps the bridge waiting: past the timeout.
const SLOW_FOR: Duration = Duration::from_secs(4);

pub async fn run(config: Config, base: &Path, options: &Options) -> Result<Report, SetupError> {
    let replay = tokio_util::sync::CancellationToken::new();
    let config = match &options.fixtures {
        Some(dir) => replayed(config, &options.upstream, dir, &replay).await?,
        None => config,
    };
    let result = Box::pin(run_on(config, base, options)).await;
    replay.cancel();
    result
}

/// `config` with the upstream's origins all pointed at a replay of the fixture set in `dir`.
async fn replayed(
    mut config: Config,
    upstream: &str,
    dir: &Path,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<Config, SetupError> {
    let set = crate::kit::fixtures::load(dir).map_err(|e| SetupError::Target(e.to_string()))?;
    let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let addr = crate::kit::replay::start(set, listen, cancel.child_token())
        .await
        .map_err(|e| SetupError::Target(format!("replaying {}: {e}", dir.display())))?;
    let origins = crate::kit::reroute::origins(&config, upstream)
        .map_err(|e| SetupError::Target(e.to_string()))?;
    let to = origins
        .into_iter()
        .map(|o| (o, format!("http://{addr}")))
        .collect();
    crate::kit::reroute::reroute(&mut config, upstream, &to)
        .map_err(|e| SetupError::Target(e.to_string()))?;
    Ok(config)
}

async fn run_on(config: Config, base: &Path, options: &Options) -> Result<Report, SetupError> {
    let started = Instant::now();
    let target = Target::new(
        config,
        base,
        &options.upstream,
        options.dealership.as_deref(),
    )?;
    let dealer = canonical::Dealer {
        id: &target.dealership,
        timezone: target.timezone().unwrap_or(chrono_tz::UTC),
        currency: target.currency().unwrap_or("USD"),
    };
    let bridge = target.start(None, None).await?;
    let mut checks = Vec::new();
    let mut not_verified = Vec::new();
    let mut probes = Vec::new();
    for domain in &target.domains {
        match domain {
            Domain::Inventory => {
                checks.extend(canonical::inventory(&bridge, &dealer).await);
                probes.push((
                    "inventory",
                    "inventory.search",
                    json!({ "dealership_id": dealer.id, "limit": 5 }),
                ));
            }
            Domain::RepairOrders => {
                checks.extend(canonical::repair_orders(&bridge, &dealer).await);
                probes.push((
                    "repair_orders",
                    "service.list_repair_orders",
                    json!({ "dealership_id": dealer.id }),
                ));
            }
            Domain::Deals => match &options.vin {
                Some(vin) => {
                    let args = json!({ "dealership_id": dealer.id, "vin": vin,
                                       "mileage": { "value": 30000, "unit": "mi" } });
                    checks.push(canonical::trade_value(&bridge, &dealer, args.clone()).await);
                    probes.push(("deals", "deals.request_trade_value", args));
                }
                None => not_verified.push("deals: give --vin with a VIN the provider knows".into()),
            },
            Domain::Service => {
                let (found, args) = canonical::service_availability(&bridge, &dealer).await;
                checks.extend(found);
                if let Some(args) = args {
                    probes.push(("service", "service.check_availability", args));
                }
                not_verified.push("service bookings: verify never books or cancels".into());
            }
            Domain::Leads => {
                not_verified.push("leads: verify never sends a lead upstream".into());
            }
        }
    }
    bridge.stop().await;
    let mut cells = Vec::new();
    if !options.skip_faults {
        for (domain, tool, args) in &probes {
            for cell in CELLS
                .iter()
                .filter(|c| c.applies(target.refreshes_tokens()))
            {
                cells.push(run_cell(&target, cell, domain, tool, args).await);
            }
        }
    }
    Ok(Report {
        upstream: target.upstream.clone(),
        kind: target.kind(),
        dealership: target.dealership.clone(),
        domains: target
            .domains
            .iter()
            .map(|d| d.as_str().to_owned())
            .collect(),
        checks,
        cells,
        not_verified,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Every upstream some dealership routes a domain to, in config order.
pub fn routed_upstreams(config: &Config) -> Vec<String> {
    config
        .upstreams
        .keys()
        .filter(|id| {
            config
                .dealerships
                .iter()
                .any(|d| d.routes.values().any(|u| u == *id))
        })
        .cloned()
        .collect()
}

fn format_of(kind: &str) -> Format {
    match kind {
        "soap" => Format::Xml,
        "feed" => Format::Delimited,
        _ => Format::Json,
    }
}

/// One cell: a fresh bridge, the fault in front of the upstream, one call.
async fn run_cell(
    target: &Target,
    cell: &Cell,
    domain: &'static str,
    tool: &str,
    args: &Value,
) -> CellResult {
    let expected = cell.expected();
    let mut result = CellResult {
        domain,
        fault: cell.name,
        expected: describe_expected(expected),
        answered: String::new(),
        leaked: Vec::new(),
        survived: false,
        verdict: Verdict::Fail,
        millis: 0,
    };
    let Some(api) = target.api_url() else {
        result.answered = "the upstream has no URL to put a fault in front of".into();
        return result;
    };
    let front = match FaultFront::start(cell.fault, format_of(target.kind()), api, SLOW_FOR).await {
        Ok(front) => front,
        Err(e) => {
            result.answered = format!("the fault front did not start: {e}");
            return result;
        }
    };
    let bridge = match target
        .start(Some(&front.url_for(api)), Some(CELL_TIMEOUT))
        .await
    {
        Ok(bridge) => bridge,
        Err(e) => {
            result.answered = format!("the bridge did not start: {e}");
            return result;
        }
    };
    let started = Instant::now();
    let answer = bridge.call_tool(tool, args.clone()).await;
    result.millis = started.elapsed().as_millis() as u64;
    // The bridge must still answer after the fault.
    result.survived = matches!(
        bridge.call_tool("dealership.list", json!({})).await,
        Answer::Ok(_)
    );
    bridge.stop().await;
    drop(front);
    let text = match &answer {
        Answer::Ok(v) | Answer::Error(v) => v.to_string(),
    };
    result.leaked = cell
        .leaks
        .iter()
        .chain(faults::ECHOED)
        .filter(|l| text.contains(**l))
        .map(|l| (*l).to_owned())
        .collect();
    let (answered, matches) = judge(&answer, expected);
    result.answered = answered;
    result.verdict = if matches && result.leaked.is_empty() && result.survived {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    result
}

fn describe_expected(expected: Expected) -> String {
    match expected {
        Expected::Succeeds => "success".into(),
        Expected::Fails {
            code,
            retryable,
            retry_after_ms,
        } => describe(code, retryable, retry_after_ms),
    }
}

fn describe(code: &str, retryable: bool, retry_after_ms: Option<u64>) -> String {
    let mut text = format!("{code}{}", if retryable { " retryable" } else { "" });
    if let Some(ms) = retry_after_ms {
        text.push_str(&format!(" after {ms} ms"));
    }
    text
}

/// What the agent was told, and whether it is what it must be told.
fn judge(answer: &Answer, expected: Expected) -> (String, bool) {
    match answer {
        Answer::Ok(_) => ("success".into(), expected == Expected::Succeeds),
        Answer::Error(envelope) => {
            let error = &envelope["error"];
            let code = error["code"].as_str().unwrap_or("?");
            let retryable = error["retryable"] == json!(true);
            let after = error["details"]["retry_after_ms"].as_u64();
            let told = describe(code, retryable, after);
            let matches = match expected {
                Expected::Succeeds => false,
                Expected::Fails {
                    code: want,
                    retryable: want_retry,
                    retry_after_ms,
                } => {
                    want == code
                        && want_retry == retryable
                        && (retry_after_ms.is_none() || retry_after_ms == after)
                }
            };
            (told, matches)
        }
    }
}

//! Command line: `demo`, `serve`, `check`, `schema`, `mapping test`, `probe`,
//! `verify`, `conform`, `leads retry`, `record`, `replay`, and the
//! customer data commands `erase`, `erasures`, `audit`, `keys`.

mod data;
pub mod demo;
mod record;
mod reload;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use crate::config::{self, Config};
use crate::contract::Principal;
use crate::gateway::Gateway;
use crate::http::serve::{self as http_serve, ServeSettings};
use crate::http::{HttpSettings, router};
use crate::kit::{conform, mapping_test, probe, verify};
use crate::{mcp, runtime};

/// Environment variable holding the caller's token in stdio mode.
pub const TOKEN_ENV: &str = "DMS_BRIDGE_TOKEN";

#[derive(Debug, Parser)]
#[command(
    name = "dms-bridge",
    version,
    about = "One canonical MCP tool surface over dealership systems"
)]
pub struct Cli {
    /// Log format on stderr.
    #[arg(long, global = true, default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the bridge with six demo dealerships and mock upstreams on loopback.
    Demo {
        /// Address for Streamable HTTP (MCP at /mcp).
        #[arg(long, default_value = "127.0.0.1:8787")]
        listen: SocketAddr,
        /// Serve MCP over stdin/stdout instead (token from DMS_BRIDGE_TOKEN).
        #[arg(long)]
        stdio: bool,
        /// Delay added by the mock CDK upstream to each inventory answer, in ms (for benchmarks).
        #[arg(long, default_value_t = 0, hide = true)]
        upstream_latency_ms: u64,
        /// Turn the read cache off (for benchmarks of the uncached path).
        #[arg(long, hide = true)]
        no_cache: bool,
        /// Refuse callers without a token (401 pointing at the demo's
        /// authorization server), so hosts that sign in only after a 401
        /// (Claude Code, claude.ai, ChatGPT) start the OAuth sign-in.
        #[arg(long)]
        require_sign_in: bool,
        /// Another store than the temporary SQLite file (for benchmarks of PostgreSQL).
        #[arg(long, hide = true)]
        store_url: Option<String>,
        /// Print the demo's config as a file to start from (it passes `check`
        /// as it is; its upstreams are loopback placeholders) and exit.
        #[arg(long)]
        print_config: bool,
    },
    /// Run the bridge from a TOML config file.
    Serve {
        #[arg(long, short)]
        config: PathBuf,
        /// Serve MCP over stdin/stdout instead of HTTP (token from DMS_BRIDGE_TOKEN).
        #[arg(long)]
        stdio: bool,
    },
    /// Validate a config file without network access; lists every problem with its path.
    Check {
        #[arg(long, short)]
        config: PathBuf,
    },
    /// Print the JSON Schema of a config file (what `check` validates its
    /// structure against; editors read it, see docs/reference/editor-setup.md).
    Schema,
    /// Test a mapping (and a profile's records path) against a saved upstream
    /// answer, offline: every record field by field, with each value's source path.
    Mapping {
        #[command(subcommand)]
        action: MappingAction,
    },
    /// Verify an upstream of a config against the canonical contract and the
    /// fault matrix, reading only: a table on stdout, exit 1 when anything failed.
    Verify {
        #[arg(long, short, required_unless_present = "demo")]
        config: Option<PathBuf>,
        /// Verify the demo's upstreams (its mocks, serving the shipped fixtures) instead.
        #[arg(long, conflicts_with = "config")]
        demo: bool,
        /// The upstream (its id under [upstreams]); repeat for several. Default:
        /// every upstream a dealership routes a domain to.
        #[arg(long)]
        upstream: Vec<String>,
        /// The dealership to read it for (default: the first that routes to it).
        #[arg(long)]
        dealership: Option<String>,
        /// A VIN the valuation provider knows (verifies the deals domain).
        #[arg(long)]
        vin: Option<String>,
        /// Only the canonical checks, no fault matrix.
        #[arg(long)]
        skip_faults: bool,
        /// Replay this recorded fixture set (`dms-bridge record`) in place of
        /// the upstream (give one --upstream).
        #[arg(long)]
        fixtures: Option<PathBuf>,
        /// Also write the report as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Read a configured upstream once per domain, live and read-only: the
    /// first canonical record, counts, each exchange's timing and rate-limit
    /// headers (never a secret). Exit 1 when a read failed.
    Probe {
        #[arg(long, short, required_unless_present = "demo")]
        config: Option<PathBuf>,
        /// Probe one of the demo's upstreams (its mocks) instead.
        #[arg(long, conflicts_with = "config")]
        demo: bool,
        /// The upstream (its id under [upstreams]).
        #[arg(long)]
        upstream: String,
        /// The dealership to read it for (default: the first that routes to it).
        #[arg(long)]
        dealership: Option<String>,
        /// A VIN for one valuation (the deals domain).
        #[arg(long)]
        vin: Option<String>,
        /// The day of repair orders to read, YYYY-MM-DD (default: yesterday).
        #[arg(long)]
        day: Option<chrono::NaiveDate>,
        /// Print the report as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Check a running deployment from outside, as a host's MCP client: the
    /// front door, both protocol eras, the tool contract, the levels it
    /// claims, the canonical contract on its data, AAP's rules, tenancy and
    /// PII. Writes nothing without --sandbox-dealership. Exit 1 when a check failed.
    Conform {
        /// The deployment's MCP endpoint, e.g. https://bridge.example.com/mcp.
        #[arg(long)]
        url: String,
        /// The caller's token (also from DMS_BRIDGE_TOKEN).
        #[arg(long, env = TOKEN_ENV, hide_env_values = true)]
        token: Option<String>,
        /// A dealership that exists but the token may not use.
        #[arg(long)]
        other_dealership: Option<String>,
        /// A dealership whose CRM is a sandbox: conform sends leads there.
        #[arg(long)]
        sandbox_dealership: Option<String>,
        /// Also write the report as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Operate on the leads in the store named by a config file.
    Leads {
        #[command(subcommand)]
        action: LeadsAction,
    },
    /// Erase one customer's data (leads, consent grants, deliveries and
    /// their ADF documents, bookings, events) by e-mail or phone; --dry-run
    /// lists what would go. The erasure itself is recorded, without the data.
    Erase(data::EraseArgs),
    /// The record of past erasures, as JSON lines.
    Erasures {
        #[arg(long, short)]
        config: PathBuf,
    },
    /// The audit trail: tool calls and refused requests, as a table or JSON lines.
    Audit(data::AuditArgs),
    /// Keys that seal customer data at rest ([store.encryption]).
    Keys {
        #[command(subcommand)]
        action: data::KeysAction,
    },
    /// Run the bridge as `serve` does, recording one upstream's exchanges
    /// into a fixture set, customer data faked and credentials removed
    /// (docs/guides/record-and-replay.md).
    Record(record::RecordArgs),
    /// Serve a fixture set as a mock upstream on loopback; prints its URL.
    Replay(record::ReplayArgs),
}

#[derive(Debug, Subcommand)]
pub enum MappingAction {
    /// Print the canonical records a mapping makes of a saved answer (JSON,
    /// XML/SOAP, CSV or TSV). Exits 1 when a path matched nothing or a
    /// required field is missing from every record, 2 when an input is unreadable.
    Test {
        /// A built-in profile (`cdk-fortellis`) or a profile file: where the records are.
        #[arg(long)]
        profile: Option<String>,
        /// A built-in mapping or a mapping file; by default the one the profile names.
        #[arg(long)]
        mapping: Option<String>,
        /// A saved upstream answer; repeat it for several answers of the same
        /// read (a path must match in one of them).
        #[arg(long, required = true)]
        response: Vec<PathBuf>,
        /// Which repair-order read of the profile answered (`all`, `open`, `closed`, `get`).
        #[arg(long)]
        read: Option<String>,
        /// Where the records are in the answer, instead of the profile's path.
        #[arg(long)]
        records: Option<String>,
        /// The dealership's time zone (local times in the answer are read in it).
        #[arg(long, default_value = "UTC")]
        timezone: chrono_tz::Tz,
        /// Currency of amounts that do not name one.
        #[arg(long, default_value = "USD")]
        currency: String,
        /// A path that may match nothing in this answer (repeatable).
        #[arg(long)]
        allow_unmatched: Vec<String>,
        /// Records printed field by field.
        #[arg(long, default_value_t = 3)]
        show: usize,
        /// Print the whole report as JSON instead.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum LeadsAction {
    /// Queue leads whose delivery failed for another round of attempts (e.g. once a
    /// CRM token is fixed). They are sent as resends with the same ADF id; a running
    /// bridge picks them up within a second.
    Retry {
        #[arg(long, short)]
        config: PathBuf,
        /// Only this dealership's leads.
        #[arg(long)]
        dealership: Option<String>,
        /// Only this lead.
        #[arg(long)]
        lead: Option<String>,
    },
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Demo {
            listen,
            stdio,
            upstream_latency_ms,
            no_cache,
            require_sign_in,
            store_url,
            print_config,
        } => {
            if print_config {
                print!("{}", demo::printed_config(listen));
                return Ok(());
            }
            let latency = Duration::from_millis(upstream_latency_ms);
            let demo = demo::run(listen, stdio, latency, no_cache, require_sign_in, store_url);
            Box::pin(demo).await
        }
        Command::Serve { config, stdio } => {
            let cfg = config::load_file(&config).map_err(|e| anyhow::anyhow!("{e}"))?;
            let base = config.parent().unwrap_or(Path::new(".")).to_path_buf();
            // Boxed: the server future is deep enough to exceed the layout query limit inline.
            Box::pin(serve(&cfg, &base, stdio, None, Some(&config))).await
        }
        Command::Check { config } => check(&config),
        Command::Schema => {
            let schema = config::reference::json_schema();
            println!("{}", serde_json::to_string_pretty(&schema)?);
            Ok(())
        }
        Command::Mapping {
            action:
                MappingAction::Test {
                    profile,
                    mapping,
                    response,
                    read,
                    records,
                    timezone,
                    currency,
                    allow_unmatched,
                    show,
                    json,
                },
        } => {
            let options = mapping_test::Options {
                profile,
                mapping,
                responses: response,
                read,
                records,
                timezone,
                currency,
                allow_unmatched,
            };
            test_mapping(&options, show, json)
        }
        Command::Verify {
            config,
            demo,
            upstream,
            dealership,
            vin,
            skip_faults,
            fixtures,
            json,
        } => {
            if fixtures.is_some() && upstream.len() != 1 {
                anyhow::bail!("--fixtures replays one upstream: give exactly one --upstream");
            }
            let options = verify::Options {
                upstream: String::new(),
                dealership,
                vin: vin.or_else(|| demo.then(|| demo::VALUED_VIN.to_owned())),
                skip_faults,
                fixtures,
            };
            let cancel = CancellationToken::new();
            let (cfg, base) = config_or_demo(config, demo, &cancel).await?;
            let result = Box::pin(verify_upstreams(
                cfg,
                &base,
                upstream,
                options,
                json.as_deref(),
            ))
            .await;
            cancel.cancel();
            result
        }
        Command::Probe {
            config,
            demo,
            upstream,
            dealership,
            vin,
            day,
            json,
        } => {
            let options = probe::Options {
                upstream,
                dealership,
                vin: vin.or_else(|| demo.then(|| demo::VALUED_VIN.to_owned())),
                day,
            };
            let cancel = CancellationToken::new();
            let (cfg, base) = config_or_demo(config, demo, &cancel).await?;
            let result = probe::run(cfg, &base, &options).await;
            cancel.cancel();
            let report = result?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.render());
            }
            if report.failed() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Conform {
            url,
            token,
            other_dealership,
            sandbox_dealership,
            json,
        } => {
            let options = conform::Options {
                url,
                token,
                other_dealership,
                sandbox_dealership,
            };
            let report = conform::run(&options).await;
            print!("{}", report.render());
            if let Some(file) = json {
                std::fs::write(&file, serde_json::to_string_pretty(&report)?)
                    .with_context(|| format!("writing {}", file.display()))?;
            }
            if report.failed() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Leads {
            action:
                LeadsAction::Retry {
                    config,
                    dealership,
                    lead,
                },
        } => retry_leads(&config, dealership.as_deref(), lead.as_deref()).await,
        Command::Erase(args) => data::run_erase(args).await,
        Command::Erasures { config } => data::run_erasures(&config).await,
        Command::Audit(args) => data::run_audit(args).await,
        Command::Keys { action } => data::run_keys(action).await,
        Command::Record(args) => Box::pin(record::record(args)).await,
        Command::Replay(args) => record::replay(args).await,
    }
}

async fn retry_leads(
    path: &Path,
    dealership: Option<&str>,
    lead: Option<&str>,
) -> anyhow::Result<()> {
    let cfg = config::load_file(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let store = runtime::sealing::open_store(&cfg, base).await?;
    let queued = crate::store::leads::requeue_failed(&store, dealership, lead).await?;
    println!("{queued} failed lead delivery(ies) queued again");
    // A named lead that was not queued: say why, and fail for one that is not there.
    if let (Some(lead), 0) = (lead, queued) {
        match crate::store::leads::standing(&store, dealership, lead).await? {
            None => anyhow::bail!(
                "no lead {lead:?}{} in the store",
                dealership
                    .map(|d| format!(" at dealership {d:?}"))
                    .unwrap_or_default()
            ),
            Some((Some(carrier), _)) => {
                println!("lead {lead} was merged into lead {carrier}; retry that one")
            }
            Some((None, state)) => println!(
                "lead {lead} was not failed (its delivery is {}); nothing to retry",
                state.as_deref().unwrap_or("unknown")
            ),
        }
    }
    Ok(())
}

/// The config at `path` and its folder, or the demo's with its mocks started
/// (they stop when `cancel` fires).
async fn config_or_demo(
    path: Option<PathBuf>,
    demo: bool,
    cancel: &CancellationToken,
) -> anyhow::Result<(Config, PathBuf)> {
    match path {
        Some(path) if !demo => {
            let cfg = config::load_file(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok((cfg, path.parent().unwrap_or(Path::new(".")).to_path_buf()))
        }
        _ => Ok((demo::started_mocks(cancel).await?, PathBuf::from("."))),
    }
}

/// Verifies each upstream in turn; exit status 1 when a check or cell failed.
async fn verify_upstreams(
    cfg: Config,
    base: &Path,
    upstreams: Vec<String>,
    options: verify::Options,
    json: Option<&Path>,
) -> anyhow::Result<()> {
    let upstreams = if upstreams.is_empty() {
        verify::routed_upstreams(&cfg)
    } else {
        upstreams
    };
    let mut reports = Vec::new();
    for upstream in upstreams {
        let options = verify::Options {
            upstream,
            ..options.clone()
        };
        let report = verify::run(cfg.clone(), base, &options).await?;
        println!("{}", report.render());
        reports.push(report);
    }
    if let Some(file) = json {
        std::fs::write(file, serde_json::to_string_pretty(&reports)?)
            .with_context(|| format!("writing {}", file.display()))?;
    }
    if reports.iter().any(verify::report::Report::failed) {
        std::process::exit(1);
    }
    Ok(())
}

/// Exit status 1 for a failed test, 2 for an input that cannot be read.
fn test_mapping(options: &mapping_test::Options, show: usize, json: bool) -> anyhow::Result<()> {
    match mapping_test::run(options) {
        Ok(report) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", mapping_test::render(&report, show));
            }
            if report.failed() {
                std::process::exit(1);
            }
            Ok(())
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

fn check(path: &Path) -> anyhow::Result<()> {
    let base = path.parent().unwrap_or(Path::new("."));
    let result = config::load_file(path).and_then(|cfg| runtime::build(&cfg, base).map(|_| cfg));
    match result {
        Ok(cfg) => {
            println!(
                "{}: OK ({} dealership(s), {} upstream(s), {} token(s))",
                path.display(),
                cfg.dealerships.len(),
                cfg.upstreams.len(),
                cfg.tokens.len()
            );
            for warning in config::privacy_warnings(&cfg) {
                eprintln!("warning: {warning}");
            }
            Ok(())
        }
        Err(errors) => {
            eprint!("{}: {errors}", path.display());
            std::process::exit(2);
        }
    }
}

/// Builds the runtime and serves over HTTP or stdio until interrupted;
/// with `reload_from` (the config file), credentials reload on SIGHUP and
/// when that file or a secret file changes.
pub async fn serve(
    cfg: &Config,
    base: &Path,
    stdio: bool,
    banner: Option<String>,
    reload_from: Option<&Path>,
) -> anyhow::Result<()> {
    Box::pin(serve_until(
        cfg,
        base,
        stdio,
        banner,
        reload_from,
        shutdown_signal(),
    ))
    .await
}

/// [`serve`], over HTTP until `stop` completes (an interruption, or the end
/// of a recording).
pub async fn serve_until(
    cfg: &Config,
    base: &Path,
    stdio: bool,
    banner: Option<String>,
    reload_from: Option<&Path>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let runtime = runtime::build(cfg, base).map_err(|e| anyhow::anyhow!("{e}"))?;
    // `background` stops feeds and the audit writer; it fires only after
    // in-flight calls have finished, so their audit records are written.
    let background = CancellationToken::new();
    let started = runtime
        .start(&background)
        .await
        .context("opening the store")?;
    if let Some(path) = reload_from {
        reload::spawn(path, &started, &background);
    }
    let gateway = started.gateway.clone();
    if stdio {
        if let Some(b) = banner {
            eprintln!("{b}");
        }
        let principal = stdio_principal(&gateway)?;
        let result = mcp::stdio::serve(gateway, principal).await;
        background.cancel();
        started.finish().await;
        return result;
    }
    let listen: SocketAddr = cfg.server.listen.parse().context("server.listen")?;
    // Each connection is a descriptor: take all the process may have, and the
    // accept loop fits its connection cap under it.
    let fd_limit = http_serve::raise_fd_limit();
    let settings = HttpSettings::for_config(cfg);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    let mcp_cancel = CancellationToken::new();
    let app = router(
        gateway,
        started.standing.clone(),
        &settings,
        mcp_cancel.clone(),
    );
    match banner {
        Some(b) => println!("{b}"),
        None => tracing::info!(
            %listen,
            path = %settings.path,
            max_connections = cfg.server.max_connections,
            fd_limit,
            "Serving MCP over Streamable HTTP."
        ),
    }
    let streams_end = settings.streams_end.clone();
    http_serve::serve(
        listener,
        app,
        &ServeSettings::from_config(&cfg.server),
        async move {
            stop.await;
            tracing::info!("Shutting down: finishing calls in flight.");
            streams_end.cancel();
        },
    )
    .await;
    mcp_cancel.cancel();
    background.cancel();
    started.finish().await;
    tracing::info!("Stopped.");
    Ok(())
}

fn stdio_principal(gateway: &Gateway) -> anyhow::Result<Arc<Principal>> {
    let auth = gateway.authenticator();
    match std::env::var(TOKEN_ENV) {
        Ok(token) if !token.is_empty() => match auth.authenticate(&token) {
            Some(p) => Ok(p),
            None => bail!("{TOKEN_ENV} holds a token this bridge does not know"),
        },
        _ => match auth.anonymous() {
            Some(p) => Ok(p),
            None => bail!(
                "set {TOKEN_ENV} to the caller's token (no dealership allows anonymous access)"
            ),
        },
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}

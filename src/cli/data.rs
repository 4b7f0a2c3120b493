//! The operator's commands on customer data: `erase` (one customer, with a
//! dry run), `erasures` (the record of past ones), `audit` (the audit trail
//! as a table or JSON lines) and `keys` (new keys; what each key seals).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};

use crate::config;
use crate::lifecycle::erase::{Report, erase};
use crate::runtime::sealing::open_store;
use crate::store::audit_trail::{self, AuditFilter};
use crate::store::erasure::{self, Subject};
use crate::telemetry::door::Door;

/// `dms-bridge erase`.
#[derive(Debug, Args)]
pub struct EraseArgs {
    #[arg(long, short)]
    config: PathBuf,
    /// The customer's e-mail address (matched trimmed, in any case).
    #[arg(long, required_unless_present = "phone")]
    email: Option<String>,
    /// The customer's phone number (matched by its digits).
    #[arg(long)]
    phone: Option<String>,
    /// Only this dealership's records (default: every dealership's).
    #[arg(long)]
    dealership: Option<String>,
    /// The request's reference (a ticket number), kept in the erasure record.
    #[arg(long)]
    reference: Option<String>,
    /// Who asks, kept in the erasure record (default: the user running this).
    #[arg(long)]
    requested_by: Option<String>,
    /// List what would be erased, and erase nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// `dms-bridge audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    #[arg(long, short)]
    config: PathBuf,
    #[arg(long)]
    dealership: Option<String>,
    /// A token's name, an OAuth subject, or `anonymous`.
    #[arg(long)]
    principal: Option<String>,
    /// A canonical tool name (`leads.create`), or `front_door` for refused requests.
    #[arg(long)]
    tool: Option<String>,
    /// The front door: `mcp`, `aap` (the Auto Agent Protocol) or `kit`.
    #[arg(long, value_parser = door_named)]
    door: Option<Door>,
    /// `ok`, an error code (`auth.forbidden`), or `refused` for every refused request.
    #[arg(long)]
    outcome: Option<String>,
    /// From this time on (RFC 3339, e.g. 2026-11-01T00:00:00Z).
    #[arg(long)]
    since: Option<chrono::DateTime<chrono::Utc>>,
    /// Before this time (RFC 3339).
    #[arg(long)]
    until: Option<chrono::DateTime<chrono::Utc>>,
    /// At most this many rows: the newest, printed oldest first.
    #[arg(long, default_value_t = 1000)]
    limit: u32,
    /// `table` for people, `jsonl` (one JSON object per line) for tools.
    #[arg(long, default_value = "table", value_parser = ["table", "jsonl"])]
    format: String,
}

#[derive(Debug, Subcommand)]
pub enum KeysAction {
    /// Print a new random key for [store.encryption] (64 hex digits).
    Generate,
    /// Rows of each table by the key that sealed them, and each key's state.
    Status {
        #[arg(long, short)]
        config: PathBuf,
    },
}

pub async fn run_erase(args: EraseArgs) -> anyhow::Result<()> {
    let (cfg, base) = load(&args.config)?;
    let store = open_store(&cfg, &base).await?;
    let subject = Subject {
        email: args.email.clone(),
        phone: args.phone.clone(),
        dealership: args.dealership.clone(),
    };
    let by = args
        .requested_by
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "operator".into());
    let report = erase(
        &store,
        &subject,
        &by,
        args.reference.as_deref(),
        args.dry_run,
    )
    .await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(())
}

fn print_report(r: &Report) {
    let verb = if r.dry_run { "Would erase" } else { "Erased" };
    if r.found.is_empty() {
        println!("No lead or booking of this customer is in the store; nothing to erase.");
    }
    for (lead, dealership) in &r.found.leads {
        println!("{verb} lead {lead} at {dealership}");
    }
    for (booking, dealership, appointment) in &r.found.bookings {
        let appointment = appointment.as_deref().unwrap_or("none");
        println!("{verb} booking {booking} at {dealership} (appointment {appointment})");
    }
    for lead in &r.found.queued {
        let verb = if r.dry_run {
            "would be cancelled"
        } else {
            "cancelled"
        };
        println!("Delivery of lead {lead} to the CRM {verb}: it was still queued.");
    }
    for lead in &r.found.in_flight {
        println!(
            "Lead {lead} was being sent to the CRM at this moment: it may reach the CRM; erase it there too."
        );
    }
    if let Some(erased) = &r.erased {
        let counts: Vec<String> = erased.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!(
            "Rows erased: {}. The erasure is recorded (dms-bridge erasures).",
            counts.join(", ")
        );
    } else {
        println!("Dry run: nothing was erased.");
    }
}

pub async fn run_erasures(config: &Path) -> anyhow::Result<()> {
    let (cfg, base) = load(config)?;
    let store = open_store(&cfg, &base).await?;
    let mut out = std::io::stdout().lock();
    for record in erasure::records(&store).await? {
        writeln!(out, "{}", serde_json::to_string(&record)?)?;
    }
    Ok(())
}

pub async fn run_audit(args: AuditArgs) -> anyhow::Result<()> {
    let (cfg, base) = load(&args.config)?;
    let store = open_store(&cfg, &base).await?;
    let at = |t: Option<chrono::DateTime<chrono::Utc>>| t.map(crate::store::ts);
    let filter = AuditFilter {
        dealership: args.dealership,
        principal: args.principal,
        tool: args.tool,
        door: args.door,
        outcome: args.outcome,
        since: at(args.since),
        until: at(args.until),
        limit: args.limit,
    };
    let rows = audit_trail::read(&store, &filter).await?;
    let mut out = std::io::stdout().lock();
    if args.format == "jsonl" {
        for row in &rows {
            writeln!(out, "{}", serde_json::to_string(row)?)?;
        }
        return Ok(());
    }
    let mut table = vec![[
        "AT".to_owned(),
        "DOOR".into(),
        "PRINCIPAL".into(),
        "DEALERSHIP".into(),
        "TOOL".into(),
        "OUTCOME".into(),
        "LATENCY_MS".into(),
        "TRACE".into(),
    ]];
    for r in &rows {
        table.push([
            crate::store::ts(r.at),
            r.door.map_or("-", Door::as_str).to_owned(),
            r.principal.clone(),
            r.dealership.clone().unwrap_or_else(|| "-".into()),
            r.tool.clone(),
            r.outcome.clone(),
            format!("{:.1}", r.latency_us as f64 / 1000.0),
            r.trace_id.clone(),
        ]);
    }
    let widths: Vec<usize> = (0..8)
        .map(|c| {
            table
                .iter()
                .map(|row| row[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    Ok(())
}

fn door_named(name: &str) -> Result<Door, String> {
    Door::from_name(name).ok_or_else(|| format!("{name:?} is no door: use mcp, aap or kit"))
}

pub async fn run_keys(action: KeysAction) -> anyhow::Result<()> {
    match action {
        KeysAction::Generate => {
            let mut key = [0u8; 32];
            ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut key)
                .map_err(|_| anyhow::anyhow!("the system's random source failed"))?;
            println!("{}", hex::encode(key));
            Ok(())
        }
        KeysAction::Status { config } => {
            let (cfg, base) = load(&config)?;
            let store = open_store(&cfg, &base).await?;
            let current = store.sealing().keyring().map(|k| k.current_id().to_owned());
            for key in crate::store::sealing::known_keys(&store).await? {
                let state = if Some(&key.id) == current.as_ref() {
                    "current"
                } else if key.retired {
                    "retired: no row uses it; it may leave the config"
                } else {
                    "still seals rows: keep it in the config"
                };
                println!("key {}: {state}", key.id);
            }
            for (table, by_key) in crate::store::reseal::counts(&store).await? {
                let counts: Vec<String> = by_key.iter().map(|(k, n)| format!("{k} {n}")).collect();
                println!(
                    "{table}: {}",
                    if counts.is_empty() {
                        "no rows".into()
                    } else {
                        counts.join(", ")
                    }
                );
            }
            Ok(())
        }
    }
}

fn load(path: &Path) -> anyhow::Result<(config::Config, PathBuf)> {
    let cfg = config::load_file(path)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("cannot load {}", path.display()))?;
    Ok((cfg, path.parent().unwrap_or(Path::new(".")).to_path_buf()))
}

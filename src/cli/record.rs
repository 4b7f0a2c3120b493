//! `dms-bridge record` and `dms-bridge replay` (the kit's [`crate::kit::record`]
//! and [`crate::kit::replay`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio_util::sync::CancellationToken;

use super::{serve_until, shutdown_signal};
use crate::config;
use crate::kit::record::{self, Limits};
use crate::kit::{fixtures, replay as kit_replay};

#[derive(Debug, Args)]
pub struct RecordArgs {
    #[arg(long, short)]
    pub config: PathBuf,
    /// The upstream (its id in the config) whose exchanges are recorded.
    #[arg(long)]
    pub upstream: String,
    /// The folder of the fixture set (created; must not hold one already).
    #[arg(long)]
    pub out: PathBuf,
    /// Stop after this many exchanges.
    #[arg(long)]
    pub calls: Option<usize>,
    /// Stop after this long (e.g. `10m`, `1h`).
    #[arg(long = "for", value_parser = humantime::parse_duration)]
    pub duration: Option<Duration>,
    /// Serve MCP here instead of the config's `server.listen`.
    #[arg(long)]
    pub listen: Option<SocketAddr>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The folder of the fixture set.
    #[arg(long)]
    pub fixtures: PathBuf,
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
}

pub async fn record(args: RecordArgs) -> anyhow::Result<()> {
    let cfg = config::load_file(&args.config).map_err(|e| anyhow::anyhow!("{e}"))?;
    let base = args.config.parent().unwrap_or(Path::new(".")).to_path_buf();
    let limits = Limits {
        calls: args.calls,
        duration: args.duration,
    };
    let (done, proxies) = (CancellationToken::new(), CancellationToken::new());
    let mut recording = record::start(
        &cfg,
        &args.upstream,
        &args.out,
        limits,
        done.clone(),
        proxies.clone(),
    )
    .await?;
    if let Some(listen) = args.listen {
        recording.config.server.listen = listen.to_string();
    }
    for (origin, proxy) in &recording.proxies {
        tracing::info!(%origin, %proxy, upstream = %args.upstream, "Recording through a proxy.");
    }
    let stop = async move {
        tokio::select! {
            _ = shutdown_signal() => {}
            _ = done.cancelled() => tracing::info!("Recording complete."),
        }
    };
    let served = Box::pin(serve_until(
        &recording.config,
        &base,
        false,
        None,
        None,
        stop,
    ))
    .await;
    proxies.cancel();
    println!(
        "recorded {} exchange(s) of upstream {} into {}",
        recording.recorder.recorded(),
        args.upstream,
        args.out.display()
    );
    served
}

pub async fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    let set = fixtures::load(&args.fixtures)?;
    let cancel = CancellationToken::new();
    let addr = kit_replay::start(set, args.listen, cancel.clone())
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    // The one line scripts read: where the set is served.
    println!("http://{addr}");
    tracing::info!(fixtures = %args.fixtures.display(), %addr, "Replaying.");
    shutdown_signal().await;
    cancel.cancel();
    Ok(())
}

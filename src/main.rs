//! Thin entry point: parse the command line, set up logging on stderr, run.

// The server's future nests the whole dispatch pipeline (trace and progress
// scopes around every tool); its layout needs more than the default 128 levels.
#![recursion_limit = "256"]

use clap::Parser;

// The bridge allocates many small JSON nodes per call; mimalloc handles that
// pattern markedly better than glibc's allocator (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use dms_bridge::cli::{Cli, run};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // Held until exit: dropping it flushes the log lines still queued.
    let (_log_guard, spans) = init_logging(&cli.log_format);
    let code = match run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    };
    if let Some(provider) = spans {
        // Sends the spans still batched; it blocks, so off the runtime's workers.
        let _ = tokio::task::spawn_blocking(move || provider.shutdown()).await;
    }
    code
}

/// Lines the log writer's queue holds: seconds of the busiest logging.
const LOG_QUEUE_LINES: usize = 4_096;

/// Logs go to stderr (in stdio mode stdout carries the MCP stream), written by
/// a background thread so a tool call never waits on the terminal or a pipe.
/// Spans go to an OTLP collector when the OTEL_EXPORTER_OTLP_* variables ask
/// for it (telemetry::otlp); the provider is returned to be flushed at exit.
fn init_logging(
    format: &str,
) -> (
    tracing_appender::non_blocking::WorkerGuard,
    Option<opentelemetry_sdk::trace::SdkTracerProvider>,
) {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    // Libraries stay at info or quieter unless named (telemetry::logs).
    let given = std::env::var("DMS_BRIDGE_LOG").ok();
    let directives = dms_bridge::telemetry::logs::directives(given.as_deref());
    let filter = EnvFilter::try_new(&directives).unwrap_or_else(|e| {
        eprintln!(
            "DMS_BRIDGE_LOG={}: {e}; logging at the default level",
            given.unwrap_or_default()
        );
        EnvFilter::new(dms_bridge::telemetry::logs::directives(None))
    });
    // The writer's queue is allocated whole at start: its default of 128,000
    // lines was 4 MB of the demo's resident memory (BENCHMARKS.md "Memory").
    // Full, it makes a call wait for the terminal rather than lose a line.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .lossy(false)
        .finish(std::io::stderr());
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let lines = tracing_subscriber::fmt::layer()
        .with_ansi(ansi)
        .with_writer(writer);
    let lines = if format == "json" {
        lines.json().flatten_event(true).boxed()
    } else {
        lines.boxed()
    };
    let provider = span_export();
    let spans = provider.as_ref().map(|p| {
        use opentelemetry::trace::TracerProvider as _;
        // The bridge's own spans: tool calls, upstream requests, deliveries.
        let ours = tracing_subscriber::filter::Targets::new()
            .with_target("dms_bridge", tracing::Level::INFO);
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("dms-bridge"))
            .with_filter(ours)
    });
    tracing_subscriber::registry()
        .with(lines.with_filter(filter))
        .with(spans)
        .init();
    (guard, provider)
}

/// The OTLP span exporter, when asked for; a setting it cannot use is said on
/// stderr and the bridge runs without export.
fn span_export() -> Option<opentelemetry_sdk::trace::SdkTracerProvider> {
    dms_bridge::net::install_tls_provider();
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| eprintln!("OTLP export is off: {e}"))
        .ok()?;
    dms_bridge::telemetry::otlp::tracer_provider(client)
        .map_err(|e| eprintln!("OTLP export is off: {e}"))
        .ok()
        .flatten()
}

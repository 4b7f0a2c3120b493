//! OpenTelemetry export over OTLP/HTTP (protobuf), off unless the operator
//! sets `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//! (the variables every OpenTelemetry SDK reads; `OTEL_SERVICE_NAME` and
//! `OTEL_RESOURCE_ATTRIBUTES` too).
//!
//! Spans exported: `tool_call` (joined to the caller's `traceparent`),
//! `upstream_request` (one per exchange, retries as siblings), `lead_delivery`
//! (one per outbox attempt, in the trace of the call that took the lead) and
//! `webhook_delivery` (one per attempt). The log lines stay as they are.

use std::fmt;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

/// The exporter's HTTP client: the bridge's own reqwest, driven on the
/// bridge's tokio runtime. The SDK's batch processor exports from a thread of
/// its own, where no tokio reactor runs, so each request is spawned onto the
/// runtime captured at start and its answer awaited from there.
pub struct RuntimeClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl RuntimeClient {
    pub fn new(client: reqwest::Client, runtime: tokio::runtime::Handle) -> Self {
        Self { client, runtime }
    }
}

impl fmt::Debug for RuntimeClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RuntimeClient")
    }
}

#[async_trait::async_trait]
impl HttpClient for RuntimeClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let (parts, body) = request.into_parts();
        let work = async move {
            let request = client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .build()?;
            let answer = client.execute(request).await?;
            let status = answer.status();
            let headers = answer.headers().clone();
            let body = answer.bytes().await?;
            let mut response = Response::builder().status(status).body(body)?;
            *response.headers_mut() = headers;
            Ok::<_, HttpError>(response)
        };
        self.runtime.spawn(work).await?
    }
}

/// Whether the operator asked for export (either OTLP endpoint variable set).
pub fn export_configured() -> bool {
    [
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ]
    .iter()
    .any(|name| std::env::var(name).is_ok_and(|v| !v.trim().is_empty()))
}

/// The tracer provider exporting spans over OTLP/HTTP, or `None` when export
/// is off. Must be called inside the tokio runtime (see [`RuntimeClient`]).
pub fn tracer_provider(
    client: reqwest::Client,
) -> Result<
    Option<opentelemetry_sdk::trace::SdkTracerProvider>,
    opentelemetry_otlp::ExporterBuildError,
> {
    use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
    if !export_configured() {
        return Ok(None);
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(RuntimeClient::new(
            client,
            tokio::runtime::Handle::current(),
        ))
        .build()?;
    let service = std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| "dms-bridge".to_owned());
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(service)
        .build();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_id_generator(CallTraceIds::default())
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    Ok(Some(provider))
}

/// Span ids as the SDK makes them, and trace ids from the call being served:
/// a tool call's span then carries the trace id its log line, audit record
/// and answer already show, also when the caller sent no `traceparent`.
#[derive(Debug, Default)]
pub struct CallTraceIds(opentelemetry_sdk::trace::RandomIdGenerator);

impl opentelemetry_sdk::trace::IdGenerator for CallTraceIds {
    fn new_trace_id(&self) -> opentelemetry::trace::TraceId {
        super::trace::CURRENT
            .try_with(|t| opentelemetry::trace::TraceId::from_hex(&t.trace_id).ok())
            .ok()
            .flatten()
            .unwrap_or_else(|| self.0.new_trace_id())
    }

    fn new_span_id(&self) -> opentelemetry::trace::SpanId {
        self.0.new_span_id()
    }
}

/// Makes the caller's span (from its `traceparent`) the parent of `span`.
/// Without one the span is a root, its trace id from [`CallTraceIds`].
pub fn join(span: &tracing::Span, trace: &super::trace::TraceContext) {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let Some(parent) = &trace.parent_id else {
        return;
    };
    let (Ok(trace_id), Ok(span_id)) =
        (TraceId::from_hex(&trace.trace_id), SpanId::from_hex(parent))
    else {
        return;
    };
    let flags = if trace.sampled {
        TraceFlags::SAMPLED
    } else {
        TraceFlags::default()
    };
    let remote = SpanContext::new(trace_id, span_id, flags, true, TraceState::default());
    // Fails only when no OpenTelemetry layer is installed (export off).
    let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(remote));
}

/// The `traceparent` of the current span when span export is on (and the
/// span is recorded), else `None`.
pub fn current_traceparent() -> Option<String> {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let context = tracing::Span::current().context();
    let span = context.span();
    let span = span.span_context();
    span.is_valid().then(|| {
        let flags = if span.is_sampled() { "01" } else { "00" };
        format!("00-{}-{}-{flags}", span.trace_id(), span.span_id())
    })
}

/// The `traceparent` to send upstream from inside a call: with span export
/// on, it names the exporting span (the upstream request), so the upstream's
/// own trace hangs under it; else a child of the call's trace, if any.
pub fn outgoing_traceparent() -> Option<String> {
    current_traceparent().or_else(super::trace::TraceContext::current_header)
}

//! OpenTelemetry export (OTLP/HTTP protobuf) to a local receiver that decodes
//! what the real binary posts: spans per tool call, upstream request, outbox
//! attempt and webhook delivery, in the caller's trace; a collector that is
//! down costs the calls nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common;
use common::config::{Token, Upstream, quoted};
use common::leads::{accepting_intake, lead, leads, wait_delivery};
use common::process::free_addr;
use common::{call_traced, connect, ok};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message;
use serde_json::json;
use tokio::process::Child;

/// One exported span, ids in lower-case hex as a `traceparent` writes them.
#[derive(Clone, Debug)]
struct Span {
    name: String,
    trace_id: String,
    span_id: String,
    parent_id: String,
    service: String,
    attributes: Vec<(String, String)>,
}

impl Span {
    fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

type Received = Arc<Mutex<Vec<Span>>>;

/// An OTLP/HTTP receiver on loopback: `POST /v1/traces`, protobuf bodies.
async fn receiver() -> (SocketAddr, Received) {
    let received = Received::default();
    let store = received.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let store = store.clone();
            async move {
                let request =
                    ExportTraceServiceRequest::decode(body).expect("an OTLP trace export");
                store.lock().unwrap().extend(spans_of(request));
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, received)
}

fn spans_of(request: ExportTraceServiceRequest) -> Vec<Span> {
    let mut spans = Vec::new();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|a| a.key == "service.name")
            .map(|a| text(a.value.as_ref().and_then(|v| v.value.as_ref())))
            .unwrap_or_default();
        for span in resource.scope_spans.into_iter().flat_map(|s| s.spans) {
            spans.push(Span {
                name: span.name,
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent_id: hex(&span.parent_span_id),
                service: service.clone(),
                attributes: span
                    .attributes
                    .iter()
                    .map(|a| {
                        (
                            a.key.clone(),
                            text(a.value.as_ref().and_then(|v| v.value.as_ref())),
                        )
                    })
                    .collect(),
            });
        }
    }
    spans
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(value: Option<&AnyValue>) -> String {
    match value {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        Some(AnyValue::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

/// Leads of `acme` to an intake that takes them, inventory from a CDK-shaped
/// upstream, every event to a webhook receiver; one token for all of it.
/// Written to `dir`, with the store there too.
fn write_config(
    dir: &std::path::Path,
    listen: SocketAddr,
    intake: &str,
    inventory: &str,
    hook: &str,
) -> std::path::PathBuf {
    let store = format!("sqlite://{}", dir.join("bridge.db").display());
    let toml = leads(intake)
        .section("server", &format!("listen = {}", quoted(&listen.to_string())))
        .section("store", &format!("url = {}", quoted(&store)))
        .edit_dealership("acme", |d| d.route("inventory", "cdk"))
        .upstream("cdk", Upstream::cdk(inventory).unset("timeout"))
        .token(Token::new(
            "traced",
            "traced-token",
            &["acme"],
            &["amcp:inventory:read", "amcp:leads:write", "amcp:leads:read"],
        ))
        .tail(&format!(
            "[webhooks.hook]\nurl = {}\nsecret = {{ value = \"whsec_dGVzdC13ZWJob29rLXNpZ25pbmcta2V5LTMyYnl0ZXM=\" }}\n\
             dealerships = [\"acme\"]\ntimeout = \"2s\"\n",
            quoted(hook)
        ))
        .render();
    let path = dir.join("bridge.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// `dms-bridge serve` with span export to `endpoint`, batched every 100 ms.
async fn start_exporting(config: &std::path::Path, addr: SocketAddr, endpoint: &str) -> Child {
    let env = [
        ("DMS_BRIDGE_LOG", "error"),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ];
    let log = config.with_file_name("bridge.log");
    common::process::start_bridge_logging(config, addr, &env, &log).await
}

/// The bridge exporting spans to `endpoint`, its upstreams, and a client.
struct Traced {
    bridge: Child,
    client: common::Client,
    inventory: wiremock::MockServer,
    intake: wiremock::MockServer,
    _hook: wiremock::MockServer,
    _dir: tempfile::TempDir,
}

impl Traced {
    async fn start(endpoint: &str) -> Self {
        let intake = accepting_intake().await;
        let (inventory, _records) = common::inventory::upstream(50).await;
        let hook = accepting_intake().await;
        let dir = tempfile::tempdir().unwrap();
        let addr = free_addr();
        let intake_url = format!("{}/adf/acme", intake.uri());
        let path = write_config(dir.path(), addr, &intake_url, &inventory.uri(), &hook.uri());
        let bridge = start_exporting(&path, addr, endpoint).await;
        let client = connect(&format!("http://{addr}/mcp"), Some("traced-token")).await;
        Self {
            bridge,
            client,
            inventory,
            intake,
            _hook: hook,
            _dir: dir,
        }
    }
}

/// The spans received once `done` holds for them (or all of them after 30 s).
async fn spans_when(received: &Received, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let spans = received.lock().unwrap().clone();
        if done(&spans) || Instant::now() >= deadline {
            return spans;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn named<'a>(spans: &'a [Span], name: &str, trace: &str) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|s| s.name == name && s.trace_id == trace)
        .collect()
}

fn one<'a>(spans: &'a [Span], name: &str, trace: &str) -> &'a Span {
    let found = named(spans, name, trace);
    assert_eq!(
        found.len(),
        1,
        "one {name} span in trace {trace}: {spans:#?}"
    );
    found[0]
}

const SEARCH_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
const LEAD_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const LEAD_CALLER_SPAN: &str = "b7ad6b7169203331";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_of_calls_upstreams_leads_and_webhooks_reach_the_collector_in_the_callers_trace() {
    let (collector, received) = receiver().await;
    let traced = Traced::start(&format!("http://{collector}/v1/traces")).await;
    let (client, inventory, intake) = (&traced.client, &traced.inventory, &traced.intake);

    let search = call_traced(
        client,
        "inventory.search",
        json!({ "dealership_id": "acme", "limit": 5 }),
        &format!("00-{SEARCH_TRACE}-{CALLER_SPAN}-01"),
    )
    .await;
    ok(&search);
    let created = call_traced(
        client,
        "leads.create",
        lead("acme", 1),
        &format!("00-{LEAD_TRACE}-{LEAD_CALLER_SPAN}-01"),
    )
    .await;
    let lead_id = ok(&created)["lead_id"].as_str().unwrap().to_owned();
    wait_delivery(
        client,
        "acme",
        &lead_id,
        "delivered",
        Duration::from_secs(30),
    )
    .await;
    let spans = spans_when(&received, |s| {
        !named(s, "upstream_request", SEARCH_TRACE).is_empty()
            && !named(s, "lead_delivery", LEAD_TRACE).is_empty()
            && !named(s, "upstream_request", LEAD_TRACE).is_empty()
            && s.iter().any(|s| s.name == "webhook_delivery")
    })
    .await;

    // The tool call hangs under the caller's span; the upstream request under it.
    let call = one(&spans, "tool_call", SEARCH_TRACE);
    assert_eq!(call.parent_id, CALLER_SPAN, "{call:?}");
    assert_eq!(call.attribute("tool"), Some("inventory.search"), "{call:?}");
    assert_eq!(call.service, "dms-bridge");
    // The exchanges with CDK (the first fetches its access token as well).
    let exchanges = named(&spans, "upstream_request", SEARCH_TRACE);
    assert!(!exchanges.is_empty());
    for exchange in &exchanges {
        assert_eq!(exchange.parent_id, call.span_id, "{exchange:?}");
        assert_eq!(exchange.attribute("upstream"), Some("cdk"), "{exchange:?}");
    }
    // The upstream is told the span that called it, so its own trace joins ours.
    let sent = upstream_traceparents(inventory).await;
    let named_span = |header: &String| {
        exchanges
            .iter()
            .any(|e| *header == format!("00-{SEARCH_TRACE}-{}-01", e.span_id))
    };
    let in_trace: Vec<_> = sent.iter().filter(|h| h.contains(SEARCH_TRACE)).collect();
    assert!(!in_trace.is_empty(), "{sent:?}");
    assert!(
        in_trace.iter().all(|h| named_span(h)),
        "{sent:?} {exchanges:#?}"
    );

    // The outbox attempt continues the trace of the call that took the lead,
    // under that call's span, though it ran after the call had answered.
    let lead_call = one(&spans, "tool_call", LEAD_TRACE);
    assert_eq!(lead_call.parent_id, LEAD_CALLER_SPAN);
    let delivery = one(&spans, "lead_delivery", LEAD_TRACE);
    assert_eq!(delivery.parent_id, lead_call.span_id, "{delivery:?}");
    assert_eq!(delivery.attribute("upstream"), Some("crm"), "{delivery:?}");
    assert_eq!(delivery.attribute("attempt"), Some("1"), "{delivery:?}");
    let post = one(&spans, "upstream_request", LEAD_TRACE);
    assert_eq!(post.parent_id, delivery.span_id, "{post:?}");
    let expected = format!("00-{LEAD_TRACE}-{}-01", post.span_id);
    assert_eq!(upstream_traceparents(intake).await, [expected]);

    let hooks: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "webhook_delivery")
        .collect();
    assert!(!hooks.is_empty());
    assert!(
        hooks
            .iter()
            .all(|h| h.attribute("endpoint") == Some("hook")),
        "{hooks:#?}"
    );
    // Only the bridge's own spans: no library's (hyper, sqlx, reqwest…).
    let names: std::collections::BTreeSet<_> = spans.iter().map(|s| s.name.as_str()).collect();
    let ours = [
        "tool_call",
        "upstream_request",
        "lead_delivery",
        "webhook_delivery",
    ];
    assert!(names.iter().all(|n| ours.contains(n)), "{names:?}");
}

/// The `traceparent` headers `server` received.
async fn upstream_traceparents(server: &wiremock::MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r.headers.get("traceparent"))
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_that_is_down_costs_the_calls_nothing() {
    // Nothing listens there: every export is refused.
    let nowhere = free_addr();
    let mut traced = Traced::start(&format!("http://{nowhere}/v1/traces")).await;
    let client = &traced.client;
    for n in 0..20 {
        let page = ok(&call_traced(
            client,
            "inventory.search",
            json!({ "dealership_id": "acme", "limit": 5 }),
            &format!("00-{SEARCH_TRACE}-{CALLER_SPAN}-01"),
        )
        .await);
        assert!(
            !page["items"].as_array().unwrap().is_empty(),
            "call {n}: {page}"
        );
        // Spans batched every 100 ms: a few exports fail while calls go on.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        traced.bridge.try_wait().unwrap().is_none(),
        "the bridge is still running"
    );
}

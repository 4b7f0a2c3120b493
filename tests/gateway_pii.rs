#![allow(clippy::unwrap_used, clippy::expect_used)]
//! No customer data and no secret ever leaves the bridge, to a caller or to a log.
//!
//! Sentinel PII is planted in every kind of upstream failure (status bodies,
//! headers, non-JSON and mis-shaped 200s, an in-band vendor error, the token
//! endpoint, a feed) and in the caller's own arguments; every tool and
//! `resources/read` is driven against each fault, through the MCP client and
//! through raw HTTP, and every client-visible byte and every captured log line
//! is grepped for the sentinels: zero hits.
//!
//! The whole test binary shares one global tracing subscriber (JSON lines into
//! a buffer), so everything runs in one `#[tokio::test]`.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine;
use common::config::{BridgeConfig, Dealership, Token, Upstream as UpstreamTable, quoted, secret};
use common::*;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

// ---------------------------------------------------------------------------
// Sentinels and secrets
// ---------------------------------------------------------------------------

const NAME: &str = "Zelda Quisenberry";
const EMAIL: &str = "zelda.quisenberry@sentinel.example";
const PHONE_E164: &str = "+15557654321";
const PHONE_US: &str = "555-765-4321";
const STREET: &str = "1313 Mockingbird Lane";
const UPSTREAM_SECRET: &str = "sk_live_SENTINEL";

/// Substrings that must never appear (compared case-insensitively).
const SENTINELS: [&str; 10] = [
    "Zelda",
    "Quisenberry",
    EMAIL,
    "sentinel.example",
    PHONE_E164,
    "5557654321",
    PHONE_US,
    "Mockingbird",
    STREET,
    UPSTREAM_SECRET,
];

/// Configured secrets (and what is derived from them) that must never be logged.
const TOKEN_SECRET: &str = "tok-ACME-9f8e7d6c5b4a";
const OTHER_TOKEN_SECRET: &str = "tok-OTHER-1a2b3c4d5e6f";
const CLIENT_ID: &str = "cid-FORTELLIS-31337";
const CLIENT_SECRET: &str = "cs-FORTELLIS-s3cr3t-42";
const ACCESS_TOKEN: &str = "at-ISSUED-0xdeadbeef-77";
const FEED_KEY: &str = "fk-FEED-key-2718281828";

fn secrets() -> Vec<String> {
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"));
    [
        TOKEN_SECRET,
        OTHER_TOKEN_SECRET,
        CLIENT_ID,
        CLIENT_SECRET,
        ACCESS_TOKEN,
        FEED_KEY,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([basic])
    .collect()
}

const TOKEN_PATH: &str = "/oauth2/token";
const INVENTORY_PATH: &str = "/cdk/sales/inventory/v2/merchandisable-vehicles/";
const FEED_PATH: &str = "/feeds/inventory.csv";
const CRM_PATH: &str = "/adf/intake";

/// Upper bound on the whole test.
const BUDGET: Duration = Duration::from_secs(240);

// ---------------------------------------------------------------------------
// Log capture: one global JSON subscriber writing into a shared buffer
// ---------------------------------------------------------------------------

/// Debug for everything, including this crate; the HTTP stacks at info. rmcp
/// stays at info: at debug it dumps every JSON-RPC message it sends or receives
/// (its own tracing, off in production where the filter is `info,rmcp=warn`), and
/// the in-process *client* would log the test's own requests, making the grep
/// meaningless. wiremock logs through `log`, which is not bridged here.
const FILTER: &str = "debug,hyper=info,hyper_util=info,h2=info,reqwest=info,rmcp=info";

#[derive(Clone)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn log_buffer() -> Arc<Mutex<Vec<u8>>> {
    static BUFFER: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    BUFFER
        .get_or_init(|| {
            let buffer = Arc::new(Mutex::new(Vec::new()));
            let sink = Sink(buffer.clone());
            let subscriber = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(FILTER))
                .with_writer(move || sink.clone())
                .json()
                .flatten_event(true)
                .finish();
            tracing::subscriber::set_global_default(subscriber)
                .expect("the only global subscriber of this test binary");
            buffer
        })
        .clone()
}

fn captured_logs() -> String {
    String::from_utf8_lossy(&log_buffer().lock().unwrap()).into_owned()
}

// ---------------------------------------------------------------------------
// Findings: every hit is collected, so one run reports all of them
// ---------------------------------------------------------------------------

/// Leaks found, grouped by where they came from (a call, or a log source), each
/// with how many times it happened and its first example.
#[derive(Default)]
struct Findings {
    leaks: std::collections::BTreeMap<String, (usize, String)>,
    /// Client-visible texts inspected, to prove the grep ran over something.
    inspected: usize,
}

impl Findings {
    /// Records the first sentinel (case-insensitive) or configured secret found in `text`.
    fn grep(&mut self, scenario: &str, place: &str, text: &str) {
        self.inspected += 1;
        if let Some((needle, context)) = find_all(text).into_iter().next() {
            self.record(place, format!("[{scenario}] {needle:?} in …{context}…"));
        }
    }

    fn record(&mut self, source: &str, example: String) {
        self.leaks
            .entry(source.to_owned())
            .or_insert_with(|| (0, example))
            .0 += 1;
    }

    fn report(&self) -> String {
        self.leaks
            .iter()
            .map(|(source, (count, example))| format!("- {source} ({count}×), e.g. {example}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// (needle, surrounding lower-cased text) for each sentinel or secret in `text`.
fn find_all(text: &str) -> Vec<(String, String)> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let needles = SENTINELS
        .iter()
        .map(|s| s.to_lowercase())
        .chain(secrets().into_iter().map(|s| s.to_lowercase()));
    for needle in needles {
        if let Some(at) = lower.find(&needle) {
            // Offsets are into the lower-cased text (lower-casing may change lengths).
            let start = floor_char(&lower, at.saturating_sub(100));
            let end = floor_char(&lower, (at + needle.len() + 100).min(lower.len()));
            out.push((needle, lower[start..end].to_owned()));
        }
    }
    out
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

// ---------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------

fn pii_text() -> String {
    format!(
        "Customer {NAME} <{EMAIL}>, phone {PHONE_E164} / {PHONE_US}, lives at {STREET}. Upstream key {UPSTREAM_SECRET}."
    )
}

/// A Fortellis-shaped error body with PII in the code, the message and extra fields.
fn pii_error_body(code: &str) -> Value {
    json!({
        "code": code,
        "message": pii_text(),
        "customer": { "name": NAME, "email": EMAIL, "phone": PHONE_E164, "address": STREET },
        "debug": { "apiKey": UPSTREAM_SECRET, "trace": format!("at com.cdk.CustomerMapper({EMAIL})") },
    })
}

/// PII in response headers too.
fn with_pii_headers(t: ResponseTemplate) -> ResponseTemplate {
    t.insert_header("X-Debug", pii_text().as_str())
        .insert_header("X-Customer-Email", EMAIL)
        .insert_header("X-Customer-Phone", PHONE_US)
        .insert_header("Set-Cookie", format!("customer={EMAIL}; Path=/").as_str())
        .insert_header(
            "Warning",
            format!("199 - \"{NAME} {UPSTREAM_SECRET}\"").as_str(),
        )
}

fn json_fault(status: u16, code: &str) -> ResponseTemplate {
    with_pii_headers(
        ResponseTemplate::new(status)
            .set_body_raw(pii_error_body(code).to_string(), "application/json"),
    )
}

fn token_ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(
        json!({ "token_type": "Bearer", "expires_in": 3600, "access_token": ACCESS_TOKEN }),
    )
}

fn html_page() -> String {
    format!(
        "<!DOCTYPE html><html><head><title>Error for {NAME}</title></head><body><h1>{EMAIL}</h1>\
         <p>Call {PHONE_US} or {PHONE_E164}; visit {STREET}.</p><!-- {UPSTREAM_SECRET} --></body></html>"
    )
}

#[derive(Clone)]
enum Upstream {
    /// A CDK/Fortellis-shaped REST upstream.
    Cdk {
        token: ResponseTemplate,
        inventory: ResponseTemplate,
        /// Use a copy of the cdk-fortellis profile with an in-band error rule.
        in_band_profile: bool,
    },
    /// A HomeNet CSV feed.
    Feed(ResponseTemplate),
}

struct Scenario {
    name: String,
    upstream: Upstream,
    /// What `inventory.search` for `acme` answers: "ok" or the error code.
    search_outcome: &'static str,
}

fn cdk(name: &str, inventory: ResponseTemplate, search_outcome: &'static str) -> Scenario {
    Scenario {
        name: name.to_owned(),
        upstream: Upstream::Cdk {
            token: token_ok(),
            inventory,
            in_band_profile: false,
        },
        search_outcome,
    }
}

fn scenarios() -> Vec<Scenario> {
    // The vendor code itself is PII: a code the profile does not know is never logged.
    let mut all = vec![cdk(
        "healthy upstream (PII in arguments only)",
        ResponseTemplate::new(200).set_body_raw(
            fixture("cdk/merchandisable-vehicles.json"),
            "application/json",
        ),
        "ok",
    )];
    for (status, outcome) in [
        (400, "upstream.rejected"),
        (401, "upstream.rejected"),
        (403, "upstream.rejected"),
        (404, "upstream.rejected"),
        (409, "upstream.rejected"),
        (422, "upstream.rejected"),
        (429, "upstream.rate_limited"),
        (500, "upstream.unavailable"),
        (502, "upstream.unavailable"),
        (503, "upstream.unavailable"),
    ] {
        let mut fault = json_fault(status, EMAIL);
        if status == 401 {
            fault = fault.insert_header(
                "WWW-Authenticate",
                format!("Bearer error=\"invalid_token\", error_description=\"{NAME} {EMAIL}\"")
                    .as_str(),
            );
        }
        if matches!(status, 429 | 503) {
            fault = fault.insert_header("Retry-After", "3");
        }
        all.push(cdk(&format!("HTTP {status} (persisting)"), fault, outcome));
    }
    all.push(cdk(
        "HTTP 400 with a known vendor code",
        json_fault(400, "INVALID-PARAMETER"),
        "upstream.rejected",
    ));
    all.push(cdk(
        "HTTP 500 with a known vendor code",
        json_fault(500, "PROCESSING-ERROR"),
        "upstream.unavailable",
    ));
    all.push(cdk(
        "HTTP 200 that is not JSON",
        with_pii_headers(
            ResponseTemplate::new(200)
                .set_body_raw(format!("{}\n{}", pii_text(), html_page()), "text/plain"),
        ),
        "upstream.invalid_response",
    ));
    all.push(cdk(
        "HTTP 200 whose /results is a string",
        with_pii_headers(
            ResponseTemplate::new(200)
                .set_body_json(json!({ "summary": { "totalCount": 1 }, "results": pii_text() })),
        ),
        "upstream.invalid_response",
    ));
    let mut in_band = pii_error_body(EMAIL);
    in_band["success"] = json!(false);
    in_band["results"] = json!([]);
    all.push(Scenario {
        name: "HTTP 200 with an in-band vendor error (custom profile)".into(),
        upstream: Upstream::Cdk {
            token: token_ok(),
            inventory: with_pii_headers(ResponseTemplate::new(200).set_body_json(in_band)),
            in_band_profile: true,
        },
        search_outcome: "upstream.rejected",
    });
    for status in [400, 401] {
        all.push(Scenario {
            name: format!("token endpoint answers {status}"),
            upstream: Upstream::Cdk {
                token: json_fault(status, EMAIL),
                inventory: ResponseTemplate::new(500),
                in_band_profile: false,
            },
            search_outcome: "upstream.rejected",
        });
    }
    all.push(Scenario {
        name: "feed answers 500".into(),
        upstream: Upstream::Feed(with_pii_headers(
            ResponseTemplate::new(500).set_body_string(pii_text()),
        )),
        search_outcome: "upstream.unavailable",
    });
    all.push(Scenario {
        name: "feed answers 200 with an HTML page".into(),
        upstream: Upstream::Feed(with_pii_headers(
            ResponseTemplate::new(200).set_body_raw(html_page(), "text/html"),
        )),
        search_outcome: "upstream.invalid_response",
    });
    all
}

// ---------------------------------------------------------------------------
// The bridge under test
// ---------------------------------------------------------------------------

/// No retries and a breaker that never opens (and no cache): each call meets the fault.
const RESILIENCE: &str =
    r#"{ retries = { max = 0 }, circuit_breaker = { failures = 100000, open_for = "1s" } }"#;

/// `acme`, every domain on one of `upstreams` (`up`, `crm`, `xt`, `ro`), and
/// `other` with none; each with a token carrying a sentinel secret.
fn config(upstreams: Vec<(&str, UpstreamTable)>) -> String {
    let acme = Dealership::acme()
        .route("inventory", "up")
        .route("leads", "crm")
        .route("service", "xt")
        .route("repair_orders", "ro");
    let scopes = [
        "amcp:inventory:read",
        "amcp:leads:write",
        "amcp:leads:read",
        "amcp:service:read",
        "amcp:service:write",
    ];
    let mut config = BridgeConfig::new()
        .call_timeout("5s")
        .no_cache()
        // Every delivery attempt meets the CRM intake's PII-laden 500.
        .section(
            "leads",
            r#"delivery = { max_attempts = 3, base_delay = "10ms", max_delay = "50ms", lease = "3s" }"#,
        )
        .dealership(acme)
        .dealership(Dealership::other())
        .token(Token::new("acme", TOKEN_SECRET, &["acme"], &scopes))
        .token(Token::new(
            "other",
            OTHER_TOKEN_SECRET,
            &["other"],
            &["amcp:inventory:read"],
        ));
    for (id, upstream) in upstreams {
        config = config.upstream(id, upstream);
    }
    config.render()
}

/// A CDK-shaped upstream on `server` with the sentinel client credentials.
fn cdk_table(server: &str, profile: &str) -> UpstreamTable {
    UpstreamTable::cdk(server)
        .set("profile", quoted(profile))
        .set("client_id", secret(CLIENT_ID))
        .set("client_secret", secret(CLIENT_SECRET))
        .resilience(RESILIENCE)
}

fn feed_table(server: &str) -> UpstreamTable {
    UpstreamTable::feed(&format!("{server}{FEED_PATH}"), "homenet-csv")
        .refresh_interval("1h")
        .timeout("2s")
        .set("headers", r#"{ "X-Api-Key" = "{secrets.feed_key}" }"#)
        .set("secrets", format!("{{ feed_key = {} }}", secret(FEED_KEY)))
        .resilience(RESILIENCE)
}

/// The cdk-fortellis profile plus an in-band error rule (`success: false` on a 200).
fn in_band_profile(dir: &std::path::Path) -> String {
    let builtin = std::fs::read_to_string(format!(
        "{}/adapters/cdk-fortellis.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(
        !builtin.contains("in_band"),
        "the built-in profile grew an in-band rule; use it directly"
    );
    let profile = format!("{builtin}\n[errors.in_band]\npath = \"/success\"\nequals = false\n");
    let file = dir.join("cdk-in-band.toml");
    std::fs::write(&file, profile).unwrap();
    file.to_str().unwrap().to_owned()
}

async fn start(scenario: &Scenario, profile_dir: &std::path::Path) -> (MockServer, Bridge) {
    let server = MockServer::start().await;
    let table = match &scenario.upstream {
        Upstream::Cdk {
            token,
            inventory,
            in_band_profile: custom,
        } => {
            Mock::given(method("POST"))
                .and(path(TOKEN_PATH))
                .respond_with(token.clone())
                .mount(&server)
                .await;
            Mock::given(method("GET"))
                .and(path(INVENTORY_PATH))
                .respond_with(inventory.clone())
                .mount(&server)
                .await;
            let profile = if *custom {
                in_band_profile(profile_dir)
            } else {
                "cdk-fortellis".to_owned()
            };
            cdk_table(&server.uri(), &profile)
        }
        Upstream::Feed(answer) => {
            Mock::given(method("GET"))
                .and(path(FEED_PATH))
                .respond_with(answer.clone())
                .mount(&server)
                .await;
            feed_table(&server.uri())
        }
    };
    Mock::given(method("POST"))
        .and(path(CRM_PATH))
        .respond_with(json_fault(500, "INTAKE-FAILED"))
        .mount(&server)
        .await;
    let crm = UpstreamTable::adf_http(&format!("{}{CRM_PATH}", server.uri())).timeout("1s");
    // Bookings meet the scenario's token endpoint, a menu, and a scheduler
    // that refuses the booking itself (404, no body).
    Mock::given(method("GET"))
        .and(path("/xt/service/services"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("xtime/services.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let xt = UpstreamTable::xtime(&format!("{}/xt", server.uri()))
        .set(
            "token_url",
            quoted(&format!("{}{TOKEN_PATH}", server.uri())),
        )
        .set("client_id", secret(CLIENT_ID))
        .set("client_secret", secret(CLIENT_SECRET))
        .set(
            "secrets",
            format!("{{ api_key = {} }}", secret(UPSTREAM_SECRET)),
        )
        .set("vars", r#"{ dealer_code = "D1" }"#)
        .resilience(RESILIENCE);
    let ro = mount_repair_orders(&server, scenario).await;
    let upstreams = vec![("up", table), ("crm", crm), ("xt", xt), ("ro", ro)];
    let bridge = with_config(&config(upstreams)).await;
    (server, bridge)
}

/// Repair orders come from a CDK Drive-shaped DMS under `/ro`: a faulty CDK
/// scenario answers its queries with the scenario's fault; otherwise the
/// orders themselves carry PII everywhere a DMS puts customer data (names,
/// phones, e-mails, addresses, comments, the customer's own words on a job).
async fn mount_repair_orders(server: &MockServer, scenario: &Scenario) -> UpstreamTable {
    const DRIVE: &str = "/ro/cdk/drive/servicerepairorder/v1";
    let fault = match &scenario.upstream {
        Upstream::Cdk { inventory, .. } if scenario.search_outcome != "ok" => {
            Some(inventory.clone())
        }
        _ => None,
    };
    for start in ["open", "closed/delta"] {
        let answer = fault.clone().unwrap_or_else(|| {
            ResponseTemplate::new(202)
                .set_body_json(json!({ "operationId": "op-pii", "status": "complete" }))
        });
        Mock::given(method("GET"))
            .and(path(format!("{DRIVE}/{start}")))
            .respond_with(answer)
            .mount(server)
            .await;
    }
    let mut data: Value =
        serde_json::from_str(&fixture("cdk/repair-orders/result-open.json")).unwrap();
    for ro in data["data"].as_array_mut().unwrap() {
        ro["customer"]["name1"] = json!("QUISENBERRY, ZELDA");
        ro["customer"]["name2"] = json!(NAME);
        ro["customer"]["address"] =
            json!({ "addressLine1": STREET, "cityStateZip": format!("{STREET}, TX 78701") });
        ro["customer"]["phoneNumbers"] = json!([{ "number": PHONE_US, "description": "CELL" }]);
        ro["customer"]["emailAddresses"] = json!([{ "address": EMAIL, "desc": "HOME" }]);
        ro["contactEmailAddress"] = json!(EMAIL);
        ro["contactPhoneNumber"] = json!(PHONE_E164);
        ro["comments"] = json!(pii_text());
        for op in ro["operations"].as_array_mut().unwrap() {
            op["line"]["serviceRequest"] =
                json!(format!("{NAME} says it squeals; call {PHONE_US}"));
        }
    }
    Mock::given(method("GET"))
        .and(path(format!("{DRIVE}/long-operations/op-pii/result")))
        .respond_with(with_pii_headers(
            ResponseTemplate::new(200).set_body_json(data),
        ))
        .mount(server)
        .await;
    cdk_table(&server.uri(), "cdk-fortellis")
        .set("base_url", quoted(&format!("{}/ro/cdk", server.uri())))
}

// ---------------------------------------------------------------------------
// Calls carrying PII
// ---------------------------------------------------------------------------

fn pii_filters() -> Value {
    json!({
        "query": format!("{NAME} {STREET}"),
        "stock": PHONE_US,
        "make": ["Zelda", "Quisenberry", PHONE_E164],
        "model": [EMAIL],
    })
}

/// Every tool, with PII planted in argument values (never in field names: unknown
/// field names are echoed in problems by design).
fn tool_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("dealership.list", json!({})),
        ("dealership.list", json!({ "note": pii_text() })),
        ("dealership.get", json!({ "dealership_id": "acme" })),
        ("dealership.get", json!({ "dealership_id": EMAIL })),
        (
            "dealership.get",
            json!({ "dealership_id": "acme", "customer": EMAIL }),
        ),
        ("inventory.search", json!({ "dealership_id": "acme" })),
        (
            "inventory.search",
            json!({ "dealership_id": "acme", "filters": pii_filters() }),
        ),
        (
            "inventory.search",
            json!({ "dealership_id": "acme", "cursor": EMAIL }),
        ),
        (
            "inventory.search",
            json!({ "dealership_id": "acme", "cursor": pii_text() }),
        ),
        (
            "inventory.search",
            json!({ "dealership_id": "acme", "zip": format!("{PHONE_US} {NAME}") }),
        ),
        (
            "inventory.search",
            json!({ "dealership_id": "acme", "colour": NAME, "filters": { "notes": STREET } }),
        ),
        (
            "inventory.search",
            json!({ "dealership_id": EMAIL, "filters": pii_filters() }),
        ),
        (
            "inventory.get",
            json!({ "dealership_id": "acme", "vehicle_id": format!("{NAME} {STREET}") }),
        ),
        (
            "inventory.get",
            json!({ "dealership_id": "acme", "stock": PHONE_US }),
        ),
        (
            "inventory.get",
            json!({ "dealership_id": "acme", "vehicle_id": EMAIL, "zip": PHONE_E164 }),
        ),
        (
            "inventory.get",
            json!({ "dealership_id": EMAIL, "vehicle_id": NAME }),
        ),
        ("inventory.facets", json!({ "dealership_id": "acme" })),
        (
            "inventory.facets",
            json!({ "dealership_id": "acme", "filters": pii_filters() }),
        ),
        (
            "inventory.facets",
            json!({ "dealership_id": "acme", "secret": UPSTREAM_SECRET }),
        ),
        ("leads.create", pii_lead()),
        ("leads.create", {
            let mut lead = pii_lead();
            lead.as_object_mut().unwrap().remove("consent");
            lead
        }),
        ("leads.create", {
            let mut lead = pii_lead();
            lead["customer"]["email"] = json!(pii_text());
            lead["customer"]["phone"] = json!(PHONE_US);
            lead["consent"]["scope"] = json!([NAME]);
            lead
        }),
        ("leads.create", {
            let mut lead = pii_lead();
            lead["idempotency_key"] = json!(EMAIL);
            lead
        }),
        (
            "leads.get",
            json!({ "dealership_id": "acme", "lead_id": EMAIL }),
        ),
        ("leads.list", json!({ "dealership_id": "acme" })),
        (
            "leads.list",
            json!({ "dealership_id": "acme", "cursor": pii_text() }),
        ),
        (
            "service.list_repair_orders",
            json!({ "dealership_id": "acme", "from": "2026-11-01", "to": "2026-11-20" }),
        ),
        (
            "service.get_repair_order",
            json!({ "dealership_id": "acme", "ro_number": "60102" }),
        ),
        (
            "service.get_repair_order",
            json!({ "dealership_id": "acme", "ro_number": EMAIL }),
        ),
        (
            "service.get_repair_order",
            json!({ "dealership_id": "acme", "repair_order_id": NAME }),
        ),
        (
            "service.list_repair_orders",
            json!({ "dealership_id": "acme", "vin": NAME, "cursor": pii_text() }),
        ),
        ("service.book_appointment", pii_booking()),
        ("service.book_appointment", {
            let mut booking = pii_booking();
            booking["customer"]["phone"] = json!(PHONE_US);
            booking["consent"]["scope"] = json!([NAME]);
            booking["start"] = json!(STREET);
            booking
        }),
        (
            "service.cancel_appointment",
            json!({ "dealership_id": "acme", "appointment_id": EMAIL, "reason": pii_text() }),
        ),
    ]
}

/// A booking whose every customer field is a sentinel.
fn pii_booking() -> Value {
    json!({
        "dealership_id": "acme", "service_codes": ["01LOF"], "year": 2019, "make": "Honda", "model": "Civic",
        "start": (chrono::Utc::now() + chrono::Duration::days(30)).to_rfc3339(),
        "customer": { "first_name": "Zelda", "last_name": "Quisenberry", "email": EMAIL, "phone": PHONE_E164 },
        "consent": {
            "granted_at": "2026-01-01T00:00:00Z", "allowed_channels": ["email", "phone"],
            "consent_text": format!("I, {NAME}, agree."), "scope": ["service_appointment"]
        },
        "comment": pii_text(),
        "idempotency_key": EMAIL
    })
}

/// A valid lead whose every customer field is a sentinel.
fn pii_lead() -> Value {
    json!({
        "dealership_id": "acme",
        "customer": {
            "first_name": "Zelda", "last_name": "Quisenberry", "email": EMAIL, "phone": PHONE_E164,
            "address": { "address_line_1": STREET, "city": "Springfield" }
        },
        "consent": {
            "granted_at": "2026-01-01T00:00:00Z", "allowed_channels": ["email", "phone"],
            "consent_text": format!("I, {NAME}, agree."), "scope": ["lead_submission"]
        },
        "vehicle_of_interest": { "make": "Honda", "model": "Civic" },
        "message": pii_text(),
        "source_agent": "pii-agent"
    })
}

fn resource_uris() -> Vec<String> {
    vec![
        "dms://dealerships/acme".into(),
        format!("dms://dealerships/{EMAIL}"),
        format!("dms://dealerships/acme/vehicles/{NAME}"),
        format!("dms://dealerships/acme/vehicles/{EMAIL}"),
        format!("dms://dealerships/{EMAIL}/vehicles/{PHONE_US}"),
    ]
}

/// Calls through the MCP client; returns the `inventory.search` outcome for plain `acme`.
async fn drive_mcp(client: &Client, scenario: &str, findings: &mut Findings) -> Option<String> {
    let mut plain_search = None;
    for (tool, args) in tool_calls() {
        let Value::Object(map) = args.clone() else {
            unreachable!()
        };
        let place = format!("MCP tools/call {tool} {args}");
        let visible = match client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(map))
            .await
        {
            Ok(result) => {
                if tool == "inventory.search" && args == json!({ "dealership_id": "acme" }) {
                    plain_search = Some(match result.is_error {
                        Some(true) => err(&result)["code"].as_str().unwrap().to_owned(),
                        _ => "ok".to_owned(),
                    });
                }
                serde_json::to_string(&result).unwrap()
            }
            Err(e) => format!("{e:?} / {e}"),
        };
        findings.grep(scenario, &place, &visible);
    }
    for uri in resource_uris() {
        let place = format!("MCP resources/read {uri}");
        let visible = match client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
        {
            Ok(result) => serde_json::to_string(&result).unwrap(),
            Err(e) => format!("{e:?} / {e}"),
        };
        findings.grep(scenario, &place, &visible);
    }
    plain_search
}

/// The exact bytes a raw HTTP caller receives: status line, headers, body.
async fn raw_post(url: &str, body: &Value) -> String {
    let response = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(url)
        .header("Authorization", format!("Bearer {TOKEN_SECRET}"))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(body)
        .send()
        .await
        .unwrap();
    let mut text = format!("HTTP {}\n", response.status());
    for (name, value) in response.headers() {
        text.push_str(&format!(
            "{name}: {}\n",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    let bytes = response.bytes().await.unwrap();
    text.push('\n');
    text.push_str(&String::from_utf8_lossy(&bytes));
    text
}

async fn drive_raw(url: &str, scenario: &str, findings: &mut Findings) {
    let mut bodies: Vec<Value> = tool_calls()
        .into_iter()
        .enumerate()
        .map(|(i, (tool, args))| {
            json!({ "jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                    "params": { "name": tool, "arguments": args } })
        })
        .collect();
    bodies.extend(resource_uris().into_iter().enumerate().map(|(i, uri)| {
        json!({ "jsonrpc": "2.0", "id": 100 + i, "method": "resources/read", "params": { "uri": uri } })
    }));
    for body in bodies {
        let text = raw_post(url, &body).await;
        assert!(text.starts_with("HTTP 200"), "[{scenario}] {body} → {text}");
        let mut request = body.clone();
        request["id"] = json!(0);
        findings.grep(scenario, &format!("raw HTTP {request}"), &text);
    }
}

// ---------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn planted_pii_and_secrets_never_reach_a_caller_or_a_log() {
    let logs = log_buffer();
    let profile_dir = tempfile::tempdir().unwrap();
    let mut findings = Findings::default();
    let mut bookings_sent = 0;
    let mut pii_orders_served = 0;
    tokio::time::timeout(BUDGET, async {
        for scenario in scenarios() {
            let (server, bridge) = start(&scenario, profile_dir.path()).await;
            let client = connect(&bridge.url, Some(TOKEN_SECRET)).await;
            let outcome = drive_mcp(&client, &scenario.name, &mut findings).await;
            assert_eq!(
                outcome.as_deref(),
                Some(scenario.search_outcome),
                "[{}] the fault was not met as planned",
                scenario.name
            );
            drive_raw(&bridge.url, &scenario.name, &mut findings).await;
            client.cancel().await.unwrap();
            let requests = server.received_requests().await.unwrap();
            bookings_sent += requests
                .iter()
                .filter(|r| r.url.path() == "/xt/service/appointments-bookings")
                .count();
            pii_orders_served += requests
                .iter()
                .filter(|r| r.url.path().ends_with("/long-operations/op-pii/result"))
                .count();
            let fault_paths = [INVENTORY_PATH, TOKEN_PATH, FEED_PATH];
            assert!(
                requests.iter().any(|r| fault_paths.contains(&r.url.path())),
                "[{}] the upstream was never asked",
                scenario.name
            );
            drop(bridge);
        }
    })
    .await
    .expect("the test exceeded its time budget");
    assert!(
        pii_orders_served > 0,
        "repair orders full of customer data were read and presented"
    );
    assert!(
        bookings_sent > 0,
        "no booking carrying planted PII reached the scheduler"
    );

    // Give the audit writers and any trailing log lines a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let text = captured_logs();

    // The capture is real: it holds our per-call lines and upstream warnings as JSON.
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        lines.len() > 100,
        "the log capture is nearly empty ({} lines)",
        lines.len()
    );
    for line in &lines {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("log line is not JSON ({e}): {line}"));
    }
    for expected in [
        "\"Tool call.\"",
        "\"Upstream call failed.\"",
        "\"Upstream answered with an error status.\"",
        "\"Upstream answer is not JSON.\"",
        "\"Upstream token endpoint refused the request.\"",
        "\"Inventory read failed; serving the last good copy.\"",
        "\"Lead delivery failed; will retry.\"",
        "\"trace_id\"",
    ] {
        assert!(
            text.contains(expected),
            "the captured logs have no {expected} line"
        );
    }
    assert!(
        findings.inspected > 500,
        "only {} responses inspected",
        findings.inspected
    );

    // Log hits, grouped by (target, message).
    for line in &lines {
        if let Some((needle, context)) = find_all(line).into_iter().next() {
            let event: Value = serde_json::from_str(line).unwrap();
            let source = format!(
                "log line from {} {:?}",
                event["target"].as_str().unwrap_or("?"),
                event["message"].as_str().unwrap_or("?")
            );
            findings.record(&source, format!("{needle:?} in …{context}…"));
        }
    }
    drop(logs);
    assert!(
        findings.leaks.is_empty(),
        "planted PII or secrets leaked from {} source(s):\n{}",
        findings.leaks.len(),
        findings.report()
    );
}

//! Upstream failures as a caller sees them, for every adapter kind: one table
//! of faults, each run against a CDK/Fortellis REST upstream, an OpenTrack
//! SOAP upstream, an inventory feed (before its first good poll, and after
//! one) and lead delivery to an ADF HTTP intake.
//!
//! A call that meets a fault answers with a normal tool result (`isError:
//! true`, never a JSON-RPC error) carrying one stable code, a truthful
//! `retryable`, one of the bridge's fixed sentences and nothing of the
//! upstream's text. A feed that has been read once keeps serving that copy
//! instead. Lead delivery happens after `leads.create` has answered, so its
//! faults show in the lead's delivery state (`leads.get`), retried or not.
//!
//! After the matrix: what the cdk-fortellis profile adds (token refresh,
//! vendor codes), with its own table.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
#[path = "upstream_faults/fake.rs"]
mod fake;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::leads::{lead, wait_delivery};
use common::*;
use fake::{FakeUpstream, single_attempt};
use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use wiremock::matchers::{bearer_token, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

// ---------------------------------------------------------------------------
// What a caller is told
// ---------------------------------------------------------------------------

/// The error of a failed call, as src/gateway/error_map.rs words it.
#[derive(Clone, Copy, Debug)]
struct Caller {
    code: &'static str,
    retryable: bool,
    message: &'static str,
    /// `details.aap_code`: the Auto Agent Protocol's name for the condition.
    aap_code: Option<&'static str>,
    /// `details.retry_after_ms`, when the upstream said how long to wait.
    retry_after_ms: Option<u64>,
}

const CREDENTIALS: Caller = Caller {
    code: "upstream.rejected",
    retryable: false,
    message: "The dealer's system refused the bridge's credentials. The bridge operator has to fix them; retrying will not help.",
    aap_code: None,
    retry_after_ms: None,
};

const fn throttled(retry_after_ms: Option<u64>) -> Caller {
    Caller {
        code: "upstream.rate_limited",
        retryable: true,
        message: "The dealer's system is throttling requests. Wait and try again.",
        aap_code: Some("RATE_LIMITED"),
        retry_after_ms,
    }
}

const UNAVAILABLE: Caller = Caller {
    code: "upstream.unavailable",
    retryable: true,
    message: "The dealer's system is unavailable right now. Try again shortly.",
    aap_code: Some("INTERNAL_ERROR"),
    retry_after_ms: None,
};

const TIMED_OUT: Caller = Caller {
    code: "upstream.timeout",
    retryable: true,
    message: "The dealer's system did not answer in time. Try again shortly.",
    aap_code: Some("INTERNAL_ERROR"),
    retry_after_ms: None,
};

const REFUSED: Caller = Caller {
    code: "upstream.rejected",
    retryable: false,
    message: "The dealer's system refused the request. Retrying the same request will not help.",
    aap_code: None,
    retry_after_ms: None,
};

const UNREADABLE: Caller = Caller {
    code: "upstream.invalid_response",
    retryable: false,
    message: "The dealer's system answered with data the bridge cannot read. The operator has been told through the logs.",
    aap_code: Some("INTERNAL_ERROR"),
    retry_after_ms: None,
};

/// What one kind does when its upstream has the fault.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    /// The tool call fails with this error.
    Fails(Caller),
    /// Feed: the last good copy is still served, unchanged.
    KeepsCopy,
    /// ADF: the lead is accepted; delivery is tried again, up to
    /// `max_attempts` (2 here), and then fails with this `last_error`.
    Retried(&'static str),
    /// ADF: the lead is accepted; delivery fails for good after one attempt.
    GivesUp(&'static str),
    /// ADF: any 2xx is the intake's acceptance, whatever its body.
    Delivered,
}

use Outcome::{Delivered, Fails, GivesUp, KeepsCopy, Retried};

// ---------------------------------------------------------------------------
// The faults
// ---------------------------------------------------------------------------

/// What the upstream does with every request to its API (a REST upstream's
/// token endpoint stays healthy).
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// This status (with `Retry-After` if given) and a plain-text body.
    Status {
        status: u16,
        retry_after: Option<&'static str>,
        body: &'static str,
    },
    /// The kind's good answer, a second after its 2s timeout.
    Slow,
    /// A 200 whose body is cut off: JSON, XML or CSV the kind cannot read.
    CutOff,
    /// A 200 with an HTML page instead of the answer.
    HtmlPage,
    /// A 500 whose body, in the kind's own error format, echoes customer data and internals.
    PiiEcho,
    /// Nothing listens at the upstream's address.
    Refused,
    /// The connection is reset once the request has been sent.
    Reset,
}

const fn status(status: u16, body: &'static str) -> Fault {
    Fault::Status {
        status,
        retry_after: None,
        body,
    }
}

/// One fault and what each kind makes of it.
struct Row {
    name: &'static str,
    fault: Fault,
    /// Upstream text that must never reach a caller.
    leaks: &'static [&'static str],
    then: Kinds,
}

/// What each kind does with a fault.
#[derive(Clone, Copy, Debug)]
struct Kinds {
    rest: Outcome,
    soap: Outcome,
    /// A feed never read successfully yet (the call itself reads it).
    feed_cold: Outcome,
    /// A feed read once, failing on later polls.
    feed_warm: Outcome,
    adf: Outcome,
}

/// What the product does for every fault below: REST, SOAP and a feed never
/// read fail alike, with `caller`; a feed read once keeps serving its copy;
/// lead delivery does `adf`. A kind that ever differs gets its own [`Kinds`].
const fn alike(caller: Caller, adf: Outcome) -> Kinds {
    Kinds {
        rest: Fails(caller),
        soap: Fails(caller),
        feed_cold: Fails(caller),
        feed_warm: KeepsCopy,
        adf,
    }
}

const SERVER_ERROR_LEAKS: &[&str] = &["IllegalStateException", "com.example", "HTTP"];

/// From `wiremock-fixtures/cdk/errors/pii-echo-500.json`; every kind's PII echo carries them.
const PII: &[&str] = &[
    "Dana",
    "Whitfield",
    "dana.whitfield@example.com",
    "+15550100188",
    "Elm St",
    "NullPointerException",
    "com.cdk",
    "PROCESSING-ERROR",
    "VehicleMapper",
    "Springfield",
];

const MATRIX: &[Row] = &[
    Row {
        name: "credentials refused (401)",
        fault: status(401, "Unauthorized: bad credentials for tenant 4711"),
        leaks: &["bad credentials", "tenant 4711"],
        // The outbox retries refused credentials: an operator fixes them within the retry horizon.
        then: alike(CREDENTIALS, Retried("unauthorized")),
    },
    Row {
        name: "credentials refused (403)",
        fault: status(403, "Forbidden: client id-7 may not read dealer 4711"),
        leaks: &["Forbidden", "id-7", "dealer 4711"],
        then: alike(CREDENTIALS, Retried("unauthorized")),
    },
    Row {
        name: "throttled (429 with Retry-After)",
        fault: Fault::Status {
            status: 429,
            retry_after: Some("7"),
            body: "Slow down, subscriber sub-123 spent its quota",
        },
        leaks: &["Slow down", "spent its quota"],
        then: alike(throttled(Some(7000)), Retried("rate_limited")),
    },
    Row {
        name: "throttled (429 without Retry-After)",
        fault: status(429, "Too many requests from 10.20.30.40"),
        leaks: &["Too many", "10.20.30.40"],
        then: alike(throttled(None), Retried("rate_limited")),
    },
    Row {
        name: "server error (500)",
        fault: status(
            500,
            "HTTP 500: java.lang.IllegalStateException in com.example.Upstream",
        ),
        leaks: SERVER_ERROR_LEAKS,
        then: alike(UNAVAILABLE, Retried("unavailable")),
    },
    Row {
        name: "bad gateway (502)",
        fault: status(
            502,
            "HTTP 502: java.lang.IllegalStateException in com.example.Upstream",
        ),
        leaks: SERVER_ERROR_LEAKS,
        then: alike(UNAVAILABLE, Retried("unavailable")),
    },
    Row {
        name: "unavailable (503)",
        fault: status(
            503,
            "HTTP 503: java.lang.IllegalStateException in com.example.Upstream",
        ),
        leaks: SERVER_ERROR_LEAKS,
        then: alike(UNAVAILABLE, Retried("unavailable")),
    },
    Row {
        name: "gateway timeout (504)",
        fault: status(504, "HTTP 504: upstream app-7.internal did not answer"),
        leaks: &["HTTP", "app-7.internal"],
        then: alike(TIMED_OUT, Retried("timeout")),
    },
    Row {
        name: "slower than the upstream's timeout",
        fault: Fault::Slow,
        leaks: &["5NMCDKFR3SH382627", "ORTEGA", "JTNCXTM71SN700564", "crm-7"],
        then: alike(TIMED_OUT, Retried("timeout")),
    },
    Row {
        name: "request refused (404)",
        fault: status(404, "Not Found: no dealer 4711 behind /v2/x"),
        leaks: &["Not Found", "dealer 4711", "/v2/x"],
        then: alike(REFUSED, GivesUp("rejected")),
    },
    Row {
        name: "cut-off body (malformed JSON, XML, CSV)",
        fault: Fault::CutOff,
        leaks: &["Dana", "Whitfield", "WHITFIELD", "cut-off"],
        then: alike(UNREADABLE, Delivered),
    },
    Row {
        name: "HTML page with 200",
        fault: Fault::HtmlPage,
        leaks: &["<html", "maintenance", "Maintenance", "nginx"],
        then: alike(UNREADABLE, Delivered),
    },
    Row {
        name: "500 echoing customer data",
        fault: Fault::PiiEcho,
        leaks: PII,
        then: alike(UNAVAILABLE, Retried("unavailable")),
    },
    Row {
        name: "connection refused",
        fault: Fault::Refused,
        leaks: &["Connection refused", "os error", "tcp connect"],
        then: alike(UNAVAILABLE, Retried("unavailable")),
    },
    Row {
        name: "connection reset",
        fault: Fault::Reset,
        leaks: &["Connection reset", "os error", "connection closed"],
        then: alike(UNAVAILABLE, Retried("unavailable")),
    },
];

// ---------------------------------------------------------------------------
// The kinds
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Rest,
    Soap,
    FeedCold,
    FeedWarm,
    Adf,
}

impl Row {
    fn expected(&self, kind: Kind) -> Outcome {
        match kind {
            Kind::Rest => self.then.rest,
            Kind::Soap => self.then.soap,
            Kind::FeedCold => self.then.feed_cold,
            Kind::FeedWarm => self.then.feed_warm,
            Kind::Adf => self.then.adf,
        }
    }
}

/// Every upstream gets this timeout, and one attempt per call from a breaker
/// that never opens: each call meets the fault itself.
const TIMEOUT: Duration = Duration::from_secs(2);
const SINGLE_ATTEMPT: &str =
    r#"{ retries = { max = 0 }, circuit_breaker = { failures = 100000, open_for = "1s" } }"#;
/// The close day the SOAP call asks for.
const CLOSE_DAY: &str = "2026-11-13";

// ---------------------------------------------------------------------------
// Running the matrix
// ---------------------------------------------------------------------------

/// Upper bound on one cell (the slowest waits for a few feed polls).
const CELL_BUDGET: Duration = Duration::from_secs(90);
/// Cells run at the same time: enough to keep the run short, few enough that
/// bridges starting up do not starve another cell's timed upstream calls.
const CONCURRENT_CELLS: usize = 4;

/// Runs every row against `kind`.
async fn matrix(kind: Kind) {
    run_all(
        MATRIX
            .iter()
            .map(|row| (format!("{kind:?} × {}", row.name), cell(kind, row).boxed()))
            .collect(),
    )
    .await;
}

/// Runs `cells`, [`CONCURRENT_CELLS`] at a time and each within [`CELL_BUDGET`],
/// and reports every one that fails.
async fn run_all(cells: Vec<(String, BoxFuture<'static, ()>)>) {
    let total = cells.len();
    let turns = Arc::new(tokio::sync::Semaphore::new(CONCURRENT_CELLS));
    let (names, runs): (Vec<String>, Vec<_>) = cells
        .into_iter()
        .map(|(name, cell)| {
            let turns = turns.clone();
            let run = tokio::spawn(async move {
                let _turn = turns.acquire().await.unwrap();
                tokio::time::timeout(CELL_BUDGET, cell)
                    .await
                    .unwrap_or_else(|_| panic!("took longer than {CELL_BUDGET:?}"));
            });
            (name, run)
        })
        .unzip();
    let outcomes = futures::future::join_all(runs).await;
    let failures: Vec<String> = names
        .iter()
        .zip(outcomes)
        .filter_map(|(name, outcome)| {
            let panic = outcome.err()?.into_panic();
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            Some(format!("- {name}: {text}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {total} cells failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

async fn cell(kind: Kind, row: &'static Row) {
    let upstream = FakeUpstream::start(kind).await;
    if kind != Kind::FeedWarm {
        upstream.break_with(row.fault);
    }
    let bridge = with_config(&upstream.config()).await;
    let token = if kind == Kind::Adf {
        "agent-token"
    } else {
        "acme-token"
    };
    let client = connect(&bridge.url, Some(token)).await;
    match (kind, row.expected(kind)) {
        (Kind::Rest | Kind::Soap | Kind::FeedCold, Fails(caller)) => {
            let started = Instant::now();
            let result = call_the_upstream(&client, kind).await;
            let elapsed = started.elapsed();
            assert_failure(&client, &result, caller, row.leaks, &upstream.addresses()).await;
            assert_took(row.fault, kind, elapsed);
            if kind.faulty_answer(row.fault).is_some() {
                assert!(
                    upstream.api_requests().await >= 1,
                    "the fault was never met"
                );
            }
        }
        (Kind::FeedWarm, KeepsCopy) => keeps_its_copy(&bridge, &client, &upstream, row.fault).await,
        (Kind::Adf, expected) => delivery(&client, &upstream, row, expected).await,
        (kind, expected) => panic!("the table cannot say {expected:?} for {kind:?}"),
    }
}

/// The tool call that reaches the kind's upstream; the transport must answer with a tool result.
async fn call_the_upstream(client: &Client, kind: Kind) -> CallToolResult {
    let (tool, args) = match kind {
        Kind::Soap => (
            "service.list_repair_orders",
            json!({ "response_format": "detailed", "dealership_id": "acme", "from": CLOSE_DAY, "to": CLOSE_DAY }),
        ),
        _ => (
            "inventory.search",
            json!({ "response_format": "detailed", "dealership_id": "acme", "limit": 100, "response_format": "detailed" }),
        ),
    };
    call_tool(client, tool, args).await
}

async fn call_tool(client: &Client, tool: &'static str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        unreachable!()
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
        .await
        .unwrap_or_else(|e| {
            panic!("the MCP transport must answer with a tool result, not a JSON-RPC or transport error: {e}")
        })
}

/// Asserts a failed call's shape and that none of `leaks` (nor the upstream's address) reaches the caller.
async fn assert_failure(
    client: &Client,
    result: &CallToolResult,
    caller: Caller,
    leaks: &[&str],
    addresses: &[String],
) {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected isError: true, got {result:?}"
    );
    assert!(
        !result.content.is_empty(),
        "an error result still carries text content"
    );
    let error = err(result);
    assert_eq!(error["code"], caller.code, "{error}");
    assert_eq!(error["retryable"], caller.retryable, "{error}");
    assert_eq!(error["message"], caller.message, "{error}");
    assert_eq!(
        error["details"].get("aap_code").and_then(Value::as_str),
        caller.aap_code,
        "{error}"
    );
    assert_eq!(
        error["details"]
            .get("retry_after_ms")
            .and_then(Value::as_u64),
        caller.retry_after_ms,
        "{error}"
    );
    if let Some(details) = error.get("details") {
        for key in details.as_object().unwrap().keys() {
            assert!(
                ["aap_code", "retry_after_ms"].contains(&key.as_str()),
                "unexpected detail {key:?} in {error}"
            );
        }
    }
    assert_no_leaks(&serde_json::to_string(result).unwrap(), leaks, addresses);
    // The session is still healthy after the failure.
    let list = ok(&call(client, "dealership.list", json!({})).await);
    assert_eq!(list["items"][0]["id"], "acme");
}

fn assert_no_leaks(whole: &str, leaks: &[&str], addresses: &[String]) {
    for text in leaks
        .iter()
        .copied()
        .chain(addresses.iter().map(String::as_str))
    {
        assert!(
            !whole.contains(text),
            "the caller sees upstream text {text:?}: {whole}"
        );
    }
}

/// A slow upstream is given up on after its own timeout (the answer's
/// message says which timeout fired: not the 30 s call deadline); a refused
/// or reset connection fails fast, without waiting for the timeout.
fn assert_took(fault: Fault, kind: Kind, elapsed: Duration) {
    match fault {
        Fault::Slow => {
            // A cold feed's call may first wait for the start-up poll, which also times out.
            let reads = if kind == Kind::FeedCold { 2 } else { 1 };
            let most = TIMEOUT * reads + Duration::from_secs(10);
            assert!(
                elapsed >= TIMEOUT - Duration::from_millis(100) && elapsed < most,
                "took {elapsed:?}, not the {TIMEOUT:?} timeout (at most {most:?})"
            );
        }
        Fault::Refused | Fault::Reset => assert!(
            elapsed < Duration::from_secs(2),
            "a broken connection fails fast, took {elapsed:?}"
        ),
        _ => {}
    }
}

/// The feed's upstream attempts so far, as `/metrics` counts them.
async fn feed_polls(bridge: &Bridge) -> u64 {
    metrics_text(bridge)
        .await
        .lines()
        .filter(|l| {
            l.starts_with("dms_bridge_upstream_requests_total{") && l.contains("upstream=\"feed\"")
        })
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum()
}

/// A feed read once meets the fault on its next polls and keeps serving what it read.
async fn keeps_its_copy(bridge: &Bridge, client: &Client, upstream: &FakeUpstream, fault: Fault) {
    let search = || call_the_upstream(client, Kind::FeedWarm);
    let before = ok(&search().await);
    assert!(before["total"].as_u64().unwrap() > 0, "{before}");
    let polls = feed_polls(bridge).await;
    let broken_at = chrono::Utc::now();
    upstream.break_with(fault);
    // Three polls after the break: the second and third surely met the fault, whole.
    let deadline = Instant::now() + Duration::from_secs(15);
    while feed_polls(bridge).await < polls + 3 {
        assert!(Instant::now() < deadline, "the feed was not polled again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = ok(&search().await);
    assert_eq!(after["total"], before["total"]);
    // A good poll may have finished between the first search and the break.
    let unverified = |page: &Value| {
        let mut items = page["items"].as_array().unwrap().clone();
        for item in &mut items {
            let at = item
                .as_object_mut()
                .unwrap()
                .remove("last_verified_at")
                .unwrap();
            let at = chrono::DateTime::parse_from_rfc3339(at.as_str().unwrap()).unwrap();
            assert!(at <= broken_at, "verified at {at}, after the feed broke");
        }
        items
    };
    assert_eq!(
        unverified(&after),
        unverified(&before),
        "the last good copy, unchanged"
    );
}

/// `leads.create` answers at once; the delivery's fault shows in `leads.get`.
async fn delivery(client: &Client, upstream: &FakeUpstream, row: &Row, expected: Outcome) {
    let mut args = lead("acme", 1);
    // A customer unlike the upstream's PII, so any sentinel found came from the upstream.
    args["customer"]["first_name"] = json!("Kim");
    args["customer"]["last_name"] = json!("Osei");
    args["customer"]["email"] = json!("kim.osei@example.net");
    let created = call_tool(client, "leads.create", args).await;
    let answer = ok(&created);
    assert_eq!(answer["status"], "received", "{answer}");
    let lead_id = answer["lead_id"].as_str().unwrap();
    let (state, attempts, last_error) = match expected {
        Retried(class) => ("failed", 2, Some(class)),
        GivesUp(class) => ("failed", 1, Some(class)),
        Delivered => ("delivered", 1, None),
        other => panic!("the table cannot say {other:?} for a lead delivery"),
    };
    let view = wait_delivery(client, "acme", lead_id, state, Duration::from_secs(20)).await;
    let delivery = &view["delivery"];
    assert_eq!(delivery["attempts"], attempts, "{view}");
    assert_eq!(delivery["last_error"].as_str(), last_error, "{view}");
    assert!(delivery.get("next_attempt_at").is_none(), "{view}");
    if upstream.kind.faulty_answer(row.fault).is_some() {
        assert_eq!(upstream.api_requests().await, attempts, "{view}");
    }
    // Neither the answer to leads.create nor the lead as leads.get shows it carries upstream text.
    for seen in [serde_json::to_string(&created).unwrap(), view.to_string()] {
        assert_no_leaks(&seen, row.leaks, &upstream.addresses());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_of_a_rest_upstream() {
    matrix(Kind::Rest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_of_a_soap_upstream() {
    matrix(Kind::Soap).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_of_a_feed_never_read() {
    matrix(Kind::FeedCold).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_of_a_feed_read_once() {
    matrix(Kind::FeedWarm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_of_an_adf_intake() {
    matrix(Kind::Adf).await;
}

// ---------------------------------------------------------------------------
// What the cdk-fortellis profile adds: token refresh and vendor codes
// ---------------------------------------------------------------------------

/// Issues `token-1`, `token-2`, … so tests can tell which token a request carried.
struct CountingTokens(AtomicUsize);

impl Respond for CountingTokens {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        ResponseTemplate::new(200).set_body_json(json!({ "token_type": "Bearer", "expires_in": 3600, "access_token": format!("token-{n}") }))
    }
}

async fn mount_tokens(server: &MockServer, times: impl Into<wiremock::Times>) {
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(CountingTokens(AtomicUsize::new(0)))
        .expect(times)
        .named("token endpoint")
        .mount(server)
        .await;
}

fn json_body(status: u16, body: String) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body, "application/json")
}

fn listed_in_fixture() -> usize {
    let fixture: Value =
        serde_json::from_str(&fixture("cdk/merchandisable-vehicles.json")).unwrap();
    fixture["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["deleted"] != json!(true) && v["vehicleStatus"]["inventoryStatus"] != "SOLD")
        .count()
}

/// A bridge on the CDK upstream at `server`, one attempt per call and no cache.
async fn cdk_bridge(server: &str) -> (Bridge, Client) {
    let toml = rest(server)
        .no_cache()
        .edit_upstream("cdk", single_attempt)
        .render();
    let bridge = with_config(&toml).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    (bridge, client)
}

#[tokio::test]
async fn expired_token_is_refreshed_once_and_the_call_succeeds() {
    let server = MockServer::start().await;
    mount_tokens(&server, 2).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .and(bearer_token("token-1"))
        .respond_with(json_body(401, fixture("cdk/errors/token-expired.json")))
        .expect(1)
        .named("inventory with the expired token")
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .and(bearer_token("token-2"))
        .respond_with(inventory_ok())
        .expect(2)
        .named("inventory with the fresh token")
        .mount(&server)
        .await;
    let (_bridge, client) = cdk_bridge(&server.uri()).await;

    let page = ok(&call_the_upstream(&client, Kind::Rest).await);
    assert_eq!(page["total"], json!(listed_in_fixture()));
    assert_eq!(
        count(&server, TOKEN_PATH).await,
        2,
        "one refresh after TOKEN-EXPIRED"
    );
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        2,
        "the refused request is retried once"
    );

    // The refreshed token is cached: the next call needs no new one.
    let again = ok(&call_the_upstream(&client, Kind::Rest).await);
    assert_eq!(again["total"], page["total"]);
    assert_eq!(count(&server, TOKEN_PATH).await, 2);
    assert_eq!(count(&server, INVENTORY_PATH).await, 3);
    server.verify().await;
}

/// The whole host down, its token endpoint too: the token cannot be fetched.
#[tokio::test]
async fn a_host_refusing_connections_is_unavailable_and_fails_fast() {
    // Held, never listening: no other test's server can take the port meanwhile.
    let (_held, closed) = dms_bridge::kit::verify::faults::refusing_port().unwrap();
    let (_bridge, client) = cdk_bridge(&format!("http://{closed}")).await;

    let started = Instant::now();
    let result = call_the_upstream(&client, Kind::Rest).await;
    let leaks = ["Connection refused", "os error", "tcp connect"];
    assert_failure(&client, &result, UNAVAILABLE, &leaks, &[closed.to_string()]).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a refused connection fails fast, took {:?}",
        started.elapsed()
    );
}

/// A CDK answer and what the caller sees, with the requests it takes.
struct CdkCase {
    name: &'static str,
    /// The token endpoint's answer; `None`: it issues `token-1`, `token-2`, ….
    token: Option<ResponseTemplate>,
    inventory: ResponseTemplate,
    caller: Caller,
    leaks: &'static [&'static str],
    /// Requests to the token endpoint and to the inventory.
    requests: (u64, u64),
}

fn cdk_cases() -> Vec<CdkCase> {
    let pii_echo = || fixture("cdk/errors/pii-echo-500.json");
    let mut unknown_code: Value = serde_json::from_str(&pii_echo()).unwrap();
    unknown_code["code"] = json!("CUSTOMER-LOOKUP-FAILED");
    vec![
        CdkCase {
            name: "a TOKEN-EXPIRED 401 that persists: exactly one refresh, no token storm",
            token: None,
            inventory: json_body(401, fixture("cdk/errors/token-expired.json")),
            caller: CREDENTIALS,
            leaks: &["TOKEN-EXPIRED", "The access token has expired", "token-1", "token-2"],
            requests: (2, 2),
        },
        CdkCase {
            name: "a plain 401 that persists: exactly one refresh, no token storm",
            token: None,
            inventory: ResponseTemplate::new(401)
                .set_body_string("Unauthorized: bad credentials for tenant 4711"),
            caller: CREDENTIALS,
            leaks: &["bad credentials", "tenant 4711", "token-1", "token-2"],
            requests: (2, 2),
        },
        CdkCase {
            name: "the token endpoint refuses the scope: no API call without a token",
            token: Some(ResponseTemplate::new(400).set_body_json(json!({ "error": "invalid_scope", "error_description": "scope anonymous is not granted to client id" }))),
            inventory: ResponseTemplate::new(200),
            caller: CREDENTIALS,
            leaks: &["invalid_scope", "not granted", "error_description"],
            requests: (1, 0),
        },
        CdkCase {
            name: "QUOTA-EXCEEDED on a 429 without Retry-After",
            token: None,
            inventory: json_body(429, fixture("cdk/errors/quota-exceeded.json")),
            caller: throttled(None),
            leaks: &["QUOTA-EXCEEDED", "Quota exceeded"],
            requests: (1, 1),
        },
        CdkCase {
            // A 403 that is really throttling must not make the bridge throw its token away.
            name: "QUOTA-EXCEEDED on a 403 with Retry-After",
            token: None,
            inventory: json_body(403, fixture("cdk/errors/quota-exceeded.json"))
                .insert_header("Retry-After", "30"),
            caller: throttled(Some(30_000)),
            leaks: &["QUOTA-EXCEEDED", "Quota exceeded"],
            requests: (1, 1),
        },
        CdkCase {
            name: "results that are not a list",
            token: None,
            inventory: ResponseTemplate::new(200).set_body_json(json!({ "summary": { "totalCount": 1 }, "results": { "vin": "5NMCDKFR3SH382627", "note": "results-should-be-a-list" } })),
            caller: UNREADABLE,
            leaks: &["5NMCDKFR3SH382627", "results-should-be-a-list"],
            requests: (1, 1),
        },
        CdkCase {
            // PROCESSING-ERROR is `unavailable` in the profile's code table, and a
            // known vendor code decides over the status.
            name: "a 400 echoing PII with a known vendor code",
            token: None,
            inventory: json_body(400, pii_echo()),
            caller: UNAVAILABLE,
            leaks: PII,
            requests: (1, 1),
        },
        CdkCase {
            name: "a 400 echoing PII with a vendor code the profile does not know",
            token: None,
            inventory: ResponseTemplate::new(400).set_body_json(unknown_code),
            caller: REFUSED,
            leaks: &["CUSTOMER-LOOKUP-FAILED", "Dana", "Whitfield", "dana.whitfield@example.com", "+15550100188", "Elm St", "NullPointerException", "com.cdk", "VehicleMapper", "Springfield"],
            requests: (1, 1),
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cdk_vendor_codes_and_token_refusals() {
    run_all(
        cdk_cases()
            .into_iter()
            .map(|case| (case.name.to_owned(), cdk_case(case).boxed()))
            .collect(),
    )
    .await;
}

async fn cdk_case(case: CdkCase) {
    let server = MockServer::start().await;
    let (tokens, calls) = case.requests;
    match case.token {
        Some(answer) => {
            Mock::given(method("POST"))
                .and(path(TOKEN_PATH))
                .respond_with(answer)
                .expect(tokens)
                .named("token endpoint")
                .mount(&server)
                .await;
        }
        None => mount_tokens(&server, tokens).await,
    }
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(case.inventory)
        .expect(calls)
        .named("inventory")
        .mount(&server)
        .await;
    let (_bridge, client) = cdk_bridge(&server.uri()).await;

    let result = call_the_upstream(&client, Kind::Rest).await;
    let address = [server.address().to_string()];
    assert_failure(&client, &result, case.caller, case.leaks, &address).await;
    server.verify().await;
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! How the bridge copes with a failing upstream: bounded retries of reads with
//! backoff, `Retry-After` honoured only when it is short, no retries of
//! refusals or unreadable answers, and a circuit breaker that fails fast,
//! shows in `/metrics` and `/readyz`, and closes again by itself.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::config::{BridgeConfig, Dealership, Token, Upstream, quoted};
use common::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const FAST_RETRIES: &str = r#"{ retries = { max = 2, base_delay = "10ms", max_delay = "100ms" } }"#;

/// Dealership `acme` on a CDK REST upstream at `base` (token endpoint at `token_base`),
/// with the given per-request `timeout` and `resilience`, and no read cache.
fn config(base: &str, token_base: &str, timeout: &str, resilience: &str) -> BridgeConfig {
    let cdk = Upstream::cdk(token_base)
        .set("base_url", quoted(&format!("{base}/cdk")))
        .timeout(timeout)
        .resilience(resilience);
    BridgeConfig::new()
        .call_timeout("5s")
        .no_cache()
        .dealership(Dealership::acme().route("inventory", "cdk"))
        .upstream("cdk", cdk)
        .token(Token::new(
            "acme",
            "acme-token",
            &["acme"],
            &["amcp:inventory:read"],
        ))
}

async fn bridge(server: &MockServer, timeout: &str, resilience: &str) -> (Bridge, Client) {
    let toml = config(&server.uri(), &server.uri(), timeout, resilience).render();
    let bridge = with_config(&toml).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    (bridge, client)
}

async fn upstream(inventory: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    mount_token(&server).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(inventory)
        .named("inventory")
        .mount(&server)
        .await;
    server
}

async fn search(client: &Client) -> CallToolResult {
    call(
        client,
        "inventory.search",
        json!({ "dealership_id": "acme", "limit": 10 }),
    )
    .await
}

/// Answers from `script` in order (the last one repeats), recording arrival times.
struct Script {
    script: Vec<ResponseTemplate>,
    next: AtomicUsize,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Script {
    fn new(script: Vec<ResponseTemplate>) -> (Self, Arc<Mutex<Vec<Instant>>>) {
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let me = Self {
            script,
            next: AtomicUsize::new(0),
            arrivals: arrivals.clone(),
        };
        (me, arrivals)
    }
}

impl Respond for Script {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        self.arrivals.lock().unwrap().push(Instant::now());
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        self.script[n.min(self.script.len() - 1)].clone()
    }
}

fn status(code: u16) -> ResponseTemplate {
    ResponseTemplate::new(code).set_body_string(format!("upstream says {code}"))
}

async fn get(url: &str) -> (u16, String) {
    let response = common::http_get(url).await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// The value of the sample `name{labels…}` in an OpenMetrics text (labels in any order).
fn metric(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines().find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (metric_name, label_text) = match series.split_once('{') {
            Some((n, rest)) => (n, rest.strip_suffix('}')?),
            None => (series, ""),
        };
        if metric_name != name {
            return None;
        }
        let present: Vec<&str> = label_text.split(',').filter(|s| !s.is_empty()).collect();
        let all = labels
            .iter()
            .all(|(k, v)| present.contains(&format!("{k}=\"{v}\"").as_str()));
        (all && present.len() == labels.len())
            .then(|| value.parse().ok())
            .flatten()
    })
}

async fn circuit_metric(bridge: &Bridge) -> Option<f64> {
    let (code, text) = get(&format!("http://{}/metrics", bridge.addr)).await;
    assert_eq!(code, 200);
    metric(&text, "dms_bridge_circuit_state", &[("upstream", "cdk")])
}

async fn readyz(bridge: &Bridge) -> (u16, Value) {
    let (code, text) = get(&format!("http://{}/readyz", bridge.addr)).await;
    (code, serde_json::from_str(&text).unwrap())
}

#[tokio::test]
async fn a_flapping_upstream_succeeds_after_two_retries() {
    let (script, _) = Script::new(vec![status(500), status(500), inventory_ok()]);
    let server = upstream(script).await;
    let (bridge, client) = bridge(&server, "2s", FAST_RETRIES).await;

    let page = ok(&search(&client).await);
    assert_eq!(page["items"].as_array().unwrap().len(), 10);
    assert_eq!(count(&server, INVENTORY_PATH).await, 3);

    let (_, text) = get(&format!("http://{}/metrics", bridge.addr)).await;
    let requests = |outcome: &str| {
        metric(
            &text,
            "dms_bridge_upstream_requests_total",
            &[("upstream", "cdk"), ("outcome", outcome)],
        )
    };
    assert_eq!(requests("unavailable"), Some(2.0), "{text}");
    assert_eq!(requests("ok"), Some(1.0), "{text}");
}

#[tokio::test]
async fn retries_are_bounded() {
    let server = upstream(status(500)).await;
    let (_bridge, client) = bridge(&server, "2s", FAST_RETRIES).await;

    let error = err(&search(&client).await);
    assert_eq!(error["code"], "upstream.unavailable", "{error}");
    assert_eq!(error["retryable"], true);
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        3,
        "one attempt plus max = 2 retries"
    );
}

#[tokio::test]
async fn a_short_retry_after_is_waited_for() {
    let throttled = ResponseTemplate::new(429)
        .insert_header("Retry-After", "1")
        .set_body_string("slow down");
    let (script, arrivals) = Script::new(vec![throttled, inventory_ok()]);
    let server = upstream(script).await;
    // Any other wait than Retry-After's (the 10 ms backoff, the 8 s max_delay)
    // falls outside the bounds below, whatever the machine's speed.
    let retries = r#"{ retries = { max = 2, base_delay = "10ms", max_delay = "8s" } }"#;
    let toml = config(&server.uri(), &server.uri(), "2s", retries)
        .call_timeout("30s")
        .render();
    let bridge = with_config(&toml).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    ok(&search(&client).await);
    let times = arrivals.lock().unwrap().clone();
    assert_eq!(times.len(), 2, "one retry after the 429");
    let gap = times[1].duration_since(times[0]);
    assert!(
        gap >= Duration::from_millis(900) && gap < Duration::from_secs(5),
        "the retry waited {gap:?}, Retry-After said 1 s"
    );
}

#[tokio::test]
async fn a_long_retry_after_is_passed_to_the_caller() {
    let throttled = ResponseTemplate::new(429)
        .insert_header("Retry-After", "30")
        .set_body_string("slow down");
    let server = upstream(throttled).await;
    // Waiting max_delay (8 s), let alone Retry-After, would pass the bound below.
    let retries = r#"{ retries = { max = 2, base_delay = "10ms", max_delay = "8s" } }"#;
    let toml = config(&server.uri(), &server.uri(), "2s", retries)
        .call_timeout("30s")
        .render();
    let bridge = with_config(&toml).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let started = Instant::now();
    let result = search(&client).await;
    let elapsed = started.elapsed();
    let error = err(&result);
    assert_eq!(error["code"], "upstream.rate_limited", "{error}");
    assert_eq!(error["retryable"], true);
    assert_eq!(error["details"]["retry_after_ms"], 30_000, "{error}");
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        1,
        "a Retry-After beyond max_delay is not waited for"
    );
    assert!(elapsed < Duration::from_secs(6), "took {elapsed:?}");
}

#[tokio::test]
async fn refusals_are_not_retried() {
    for (code, expected) in [(400, "upstream.rejected"), (404, "upstream.rejected")] {
        let server = upstream(status(code)).await;
        let (_bridge, client) = bridge(&server, "2s", FAST_RETRIES).await;
        let error = err(&search(&client).await);
        assert_eq!(error["code"], expected, "HTTP {code}: {error}");
        assert_eq!(error["retryable"], false);
        assert_eq!(
            count(&server, INVENTORY_PATH).await,
            1,
            "HTTP {code} must not be retried"
        );
    }
}

#[tokio::test]
async fn timeouts_are_retried_then_reported() {
    // The upstream never answers within the 1 s timeout; the call deadline
    // (30 s) is far from three attempts, so only the upstream timeout can fire.
    let server = upstream(inventory_ok().set_delay(Duration::from_secs(20))).await;
    let retries = r#"{ retries = { max = 2, base_delay = "10ms", max_delay = "50ms" } }"#;
    let toml = config(&server.uri(), &server.uri(), "1s", retries)
        .call_timeout("30s")
        .render();
    let bridge = with_config(&toml).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let started = Instant::now();
    let result = search(&client).await;
    let elapsed = started.elapsed();
    let error = err(&result);
    assert_eq!(error["code"], "upstream.timeout", "{error}");
    assert_eq!(error["retryable"], true);
    assert_eq!(
        error["message"], "The dealer's system did not answer in time. Try again shortly.",
        "the upstream timeout fired, not the call deadline"
    );
    assert_eq!(count(&server, INVENTORY_PATH).await, 3);
    assert!(
        elapsed >= Duration::from_secs(3) && elapsed < Duration::from_secs(20),
        "three 1 s attempts took {elapsed:?}"
    );
}

#[tokio::test]
async fn connection_resets_are_retried_then_unavailable() {
    let tokens = MockServer::start().await;
    mount_token(&tokens).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let accepts = Arc::new(AtomicUsize::new(0));
    let counter = accepts.clone();
    let acceptor = tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    // A reset must fail at once, not wait out the 30 s timeout.
    let toml = config(
        &format!("http://{address}"),
        &tokens.uri(),
        "30s",
        FAST_RETRIES,
    )
    .call_timeout("60s")
    .render();
    let bridge = with_config(&toml).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let started = Instant::now();
    let result = search(&client).await;
    let elapsed = started.elapsed();
    let error = err(&result);
    assert_eq!(error["code"], "upstream.unavailable", "{error}");
    assert_eq!(error["retryable"], true);
    assert_eq!(
        accepts.load(Ordering::SeqCst),
        3,
        "one attempt plus max = 2 retries"
    );
    assert_eq!(count(&tokens, TOKEN_PATH).await, 1);
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    acceptor.abort();
}

#[tokio::test]
async fn an_unreadable_answer_is_not_retried() {
    let html = "<!DOCTYPE html><html><body><h1>Down for maintenance</h1></body></html>";
    let server = upstream(ResponseTemplate::new(200).set_body_raw(html, "text/html")).await;
    let (_bridge, client) = bridge(&server, "2s", FAST_RETRIES).await;

    let error = err(&search(&client).await);
    assert_eq!(error["code"], "upstream.invalid_response", "{error}");
    assert_eq!(error["retryable"], false);
    assert_eq!(count(&server, INVENTORY_PATH).await, 1);
}

#[tokio::test]
async fn the_circuit_opens_fails_fast_and_closes_after_a_good_trial() {
    // open_for is long next to the few local calls made while it is open, so
    // the checks of the open circuit hold on any machine; the test waits it out.
    let server = upstream(status(503)).await;
    let breaker =
        r#"{ retries = { max = 0 }, circuit_breaker = { failures = 3, open_for = "6s" } }"#;
    let (bridge, client) = bridge(&server, "2s", breaker).await;
    assert_eq!(circuit_metric(&bridge).await, Some(0.0));
    assert_eq!(readyz(&bridge).await.1["upstreams"]["cdk"], "closed");

    for n in 1..=3 {
        let error = err(&search(&client).await);
        assert_eq!(error["code"], "upstream.unavailable", "{error}");
        assert_eq!(count(&server, INVENTORY_PATH).await, n);
    }
    let opened = Instant::now();

    let error = err(&search(&client).await);
    assert_eq!(error["code"], "upstream.unavailable", "{error}");
    assert_eq!(error["retryable"], true);
    let wait = error["details"]["retry_after_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("no retry_after_ms: {error}"));
    assert!((1..=6_000).contains(&wait), "{error}");
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        3,
        "an open circuit sends nothing upstream"
    );

    assert_eq!(circuit_metric(&bridge).await, Some(2.0), "2 = open");
    let (code, ready) = readyz(&bridge).await;
    assert_eq!(
        code, 200,
        "an open circuit does not make the bridge unready"
    );
    assert_eq!(ready["upstreams"]["cdk"], "open", "{ready}");
    assert!(
        opened.elapsed() < Duration::from_secs(5),
        "the checks above took longer than the circuit stays open"
    );

    // The upstream recovers; after open_for one trial call goes through.
    server.reset().await;
    mount_token(&server).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(inventory_ok())
        .mount(&server)
        .await;
    tokio::time::sleep(Duration::from_millis(6100).saturating_sub(opened.elapsed())).await;
    // By time alone the circuit is ready for a trial; the gauge says so before any call.
    assert_eq!(circuit_metric(&bridge).await, Some(1.0), "1 = half-open");

    let page = ok(&search(&client).await);
    assert_eq!(page["items"].as_array().unwrap().len(), 10);
    assert_eq!(count(&server, INVENTORY_PATH).await, 1);
    assert_eq!(circuit_metric(&bridge).await, Some(0.0), "0 = closed");
    let (code, ready) = readyz(&bridge).await;
    assert_eq!(code, 200);
    assert_eq!(ready["upstreams"]["cdk"], "closed", "{ready}");
    ok(&search(&client).await);
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
}

#[tokio::test]
async fn refusals_do_not_open_the_circuit() {
    let server = upstream(status(400)).await;
    let breaker =
        r#"{ retries = { max = 0 }, circuit_breaker = { failures = 3, open_for = "1s" } }"#;
    let (bridge, client) = bridge(&server, "2s", breaker).await;

    for n in 1..=10 {
        let error = err(&search(&client).await);
        assert_eq!(error["code"], "upstream.rejected", "call {n}: {error}");
        assert_eq!(count(&server, INVENTORY_PATH).await, n);
    }
    assert_eq!(circuit_metric(&bridge).await, Some(0.0));
    assert_eq!(readyz(&bridge).await.1["upstreams"]["cdk"], "closed");
}

/// Calls `search` every 100 ms until one succeeds (`Ok` with the error codes
/// seen before it) or `within` has passed (`Err` with every error code seen).
async fn first_success_within(
    client: &Client,
    within: Duration,
) -> Result<Vec<String>, Vec<String>> {
    let until = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        let result = search(client).await;
        if result.is_error != Some(true) {
            return Ok(seen);
        }
        seen.push(err(&result)["code"].as_str().unwrap().to_owned());
        if Instant::now() >= until {
            return Err(seen);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn answer_inventory_with(server: &MockServer, response: ResponseTemplate) {
    server.reset().await;
    mount_token(server).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(response)
        .mount(server)
        .await;
}

/// A half-open trial cut off by the call deadline never reports back; the
/// breaker must still let another trial through later instead of failing fast forever.
#[tokio::test]
async fn a_trial_cut_off_by_the_call_deadline_does_not_wedge_the_circuit() {
    let server = upstream(status(503)).await;
    let breaker =
        r#"{ retries = { max = 0 }, circuit_breaker = { failures = 1, open_for = "3s" } }"#;
    let toml = config(&server.uri(), &server.uri(), "20s", breaker)
        .call_timeout("1s")
        .render();
    let bridge = with_config(&toml).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    assert_eq!(err(&search(&client).await)["code"], "upstream.unavailable");
    assert_eq!(readyz(&bridge).await.1["upstreams"]["cdk"], "open");

    // The trial: the upstream is slower than the call deadline.
    answer_inventory_with(&server, inventory_ok().set_delay(Duration::from_secs(10))).await;
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let error = err(&search(&client).await);
    assert_eq!(error["code"], "upstream.timeout", "{error}");
    assert_eq!(
        error["message"],
        "The call took longer than the bridge allows. Try again, or narrow the request."
    );
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        1,
        "the trial went upstream"
    );

    // The upstream is healthy again: within a few open_for periods a call must get through.
    answer_inventory_with(&server, inventory_ok()).await;
    let recovered = first_success_within(&client, Duration::from_secs(15)).await;
    let ready = readyz(&bridge).await.1;
    assert!(
        recovered.is_ok(),
        "the circuit stayed shut after an abandoned trial; /readyz says {ready}; calls got {recovered:?}"
    );
    assert_eq!(ready["upstreams"]["cdk"], "closed", "{ready}");
}

/// A half-open trial refused by the bridge's own upstream quota never reaches
/// the upstream; it must not leave the circuit half-open forever.
#[tokio::test]
async fn a_trial_refused_by_the_upstream_quota_does_not_wedge_the_circuit() {
    let server = upstream(status(503)).await;
    let resilience = r#"{ rate_limit = { requests = 1, per = "2s", burst = 1 }, max_queue_wait = "100ms", retries = { max = 0 }, circuit_breaker = { failures = 1, open_for = "300ms" } }"#;
    let (bridge, client) = bridge(&server, "2s", resilience).await;
    let started = Instant::now();

    assert_eq!(err(&search(&client).await)["code"], "upstream.unavailable");
    answer_inventory_with(&server, inventory_ok()).await;
    tokio::time::sleep(Duration::from_millis(350)).await;
    // The trial is admitted by the breaker but the quota (1 per 2 s) is spent.
    let error = err(&search(&client).await);
    assert_eq!(error["code"], "rate_limited", "{error}");
    assert_eq!(error["details"]["scope"], "upstream", "{error}");
    assert_eq!(count(&server, INVENTORY_PATH).await, 0);

    // Once the quota has refilled, the healthy upstream must be reachable again.
    tokio::time::sleep(Duration::from_millis(2100).saturating_sub(started.elapsed())).await;
    let recovered = first_success_within(&client, Duration::from_millis(2500)).await;
    let ready = readyz(&bridge).await.1;
    assert!(
        recovered.is_ok(),
        "the circuit stayed shut after a trial the quota refused; /readyz says {ready}; calls got {recovered:?}"
    );
    assert_eq!(ready["upstreams"]["cdk"], "closed", "{ready}");
}

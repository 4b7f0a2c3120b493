//! Signed event webhooks out: real receivers (the test kit's, on loopback)
//! that fail half their requests, fail one event for good, come up late, or
//! outlive a bridge killed with SIGKILL. Every event the bridge records
//! arrives, first deliveries in sequence order, each signature checked here
//! with an HMAC of the test's own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine;
use common::config::quoted;
use common::leads::{accepting_intake, lead, leads};
use common::process::{free_addr, start_bridge};
use common::{Bridge, Client, call, connect, demo, metrics_text, ok, with_config};
use dms_bridge_testkit::mock_webhooks::{Delivery, MockWebhooks};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

const SECRET: &str = "whsec_dGVzdC13ZWJob29rLXNpZ25pbmcta2V5LTMyYnl0ZXM=";
const WAIT: Duration = Duration::from_secs(30);

/// A receiver on a loopback port of its own.
async fn receiver() -> (MockWebhooks, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    (serve_receiver(listener), format!("http://{addr}/webhooks"))
}

fn serve_receiver(listener: tokio::net::TcpListener) -> MockWebhooks {
    let hooks = MockWebhooks::new(SECRET).unwrap();
    let router = hooks.router();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    hooks
}

/// `[webhooks.hook]` for `acme` at `url`, fast retries, then `extra` lines.
fn hook(url: &str, extra: &str) -> String {
    format!(
        "[webhooks.hook]\nurl = {}\nsecret = {{ value = {} }}\ndealerships = [\"acme\"]\n\
         timeout = \"2s\"\nbase_delay = \"20ms\"\nmax_delay = \"200ms\"\n{extra}\n",
        quoted(url),
        quoted(SECRET)
    )
}

/// Leads for `acme` go to an intake that takes them all; events to `hook_url`.
async fn bridge(hook_url: &str, extra: &str) -> (Bridge, Client, wiremock::MockServer) {
    let intake = accepting_intake().await;
    let toml = leads(&format!("{}/adf/acme", intake.uri()))
        .tail(&hook(hook_url, extra))
        .render();
    let bridge = with_config(&toml).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    (bridge, client, intake)
}

/// Takes `count` leads, numbered from `from`.
async fn take_leads(client: &Client, from: usize, count: usize) {
    for n in from..from + count {
        ok(&call(client, "leads.create", lead("acme", n)).await);
    }
}

/// Every event of `acme` in the store, in sequence order, as JSON.
async fn stored_events(bridge: &Bridge) -> Vec<Value> {
    dms_bridge::store::events::after(bridge.gateway.store(), "acme", 0, 10_000)
        .await
        .unwrap()
        .into_iter()
        .map(|s| serde_json::to_value(s.event).unwrap())
        .collect()
}

/// Checks the signature with an HMAC computed here, not the test kit's.
fn assert_signed(d: &Delivery) {
    let key = base64::engine::general_purpose::STANDARD
        .decode(SECRET.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.{}", d.id, d.timestamp, d.body).as_bytes());
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    assert_eq!(
        d.signature,
        format!("v1,{expected}"),
        "signature of {}",
        d.id
    );
    let body: Value = serde_json::from_str(&d.body).unwrap();
    assert_eq!(body["id"], d.id.as_str(), "webhook-id is the event id");
    assert!((chrono::Utc::now().timestamp() - d.timestamp).abs() < 120);
}

/// The first delivery of each event id, in the order they arrived.
fn first_deliveries(deliveries: &[Delivery]) -> Vec<Value> {
    let mut seen = BTreeSet::new();
    deliveries
        .iter()
        .filter(|d| seen.insert(d.id.clone()))
        .map(|d| serde_json::from_str(&d.body).unwrap())
        .collect()
}

fn ids(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// `/metrics` once it holds every text in `wanted` (or after [`WAIT`]): the
/// bridge counts a delivery when it has read the receiver's answer, a moment
/// after the receiver recorded it.
async fn metrics_having(bridge: &Bridge, wanted: &[String]) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let text = metrics_text(bridge).await;
        let all = wanted.iter().all(|w| text.contains(w.as_str()));
        if all || std::time::Instant::now() >= deadline {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until `hooks` has a delivery of every id in `wanted()`'s answer.
async fn wait_for_all<F, Fut>(hooks: &MockWebhooks, wanted: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Vec<String>>,
{
    tokio::time::timeout(WAIT, async {
        loop {
            let wanted = wanted().await;
            let got: BTreeSet<String> = hooks.deliveries().into_iter().map(|d| d.id).collect();
            if !wanted.is_empty() && wanted.iter().all(|id| got.contains(id)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("not every event arrived: {:?}", hooks.deliveries()));
}

async fn readyz(addr: SocketAddr) -> Value {
    common::http_get(format!("http://{addr}/readyz"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn every_event_arrives_signed_and_in_order_through_a_receiver_failing_half() {
    let (hooks, url) = receiver().await;
    hooks.fail_every(2);
    let (bridge, client, _intake) = bridge(&url, "max_attempts = 50").await;
    take_leads(&client, 0, 5).await;
    // Five leads and their five deliveries to the CRM.
    wait_for_all(&hooks, || async {
        let stored = stored_events(&bridge).await;
        if stored.len() < 10 {
            Vec::new()
        } else {
            ids(&stored)
        }
    })
    .await;

    let stored = stored_events(&bridge).await;
    assert_eq!(stored.len(), 10, "{stored:?}");
    let deliveries = hooks.deliveries();
    deliveries.iter().for_each(assert_signed);
    let first = first_deliveries(&deliveries);
    assert_eq!(
        first, stored,
        "first deliveries are the events, in sequence order"
    );
    let sequences: Vec<u64> = first
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(sequences, (1..=10).collect::<Vec<_>>());
    assert!(
        hooks.requests() >= 2 * stored.len() - 1,
        "half the requests failed"
    );
    assert_eq!(hooks.refused_signatures(), 0);
    let retried = r#"dms_bridge_webhook_deliveries_total{endpoint="hook",result="retried"}"#;
    let delivered = deliveries.iter().filter(|d| !d.repeat).count();
    let delivered = format!(
        r#"dms_bridge_webhook_deliveries_total{{endpoint="hook",result="delivered"}} {delivered}"#
    );
    let metrics = metrics_having(&bridge, &[retried.to_owned(), delivered.clone()]).await;
    assert!(metrics.contains(retried), "{metrics}");
    assert!(metrics.contains(&delivered), "{delivered} in {metrics}");
}

#[tokio::test]
async fn an_event_never_taken_is_dead_lettered_and_the_next_one_is_delivered() {
    let (hooks, url) = receiver().await;
    hooks.fail_event("evt_acme_1");
    let (bridge, client, _intake) = bridge(&url, "max_attempts = 3").await;
    take_leads(&client, 0, 1).await;
    wait_for_all(&hooks, || async { vec!["evt_acme_2".to_owned()] }).await;

    let delivered: Vec<String> = hooks.deliveries().into_iter().map(|d| d.id).collect();
    assert_eq!(delivered, ["evt_acme_2"]);
    assert_eq!(hooks.requests(), 3 + 1, "three attempts at the first event");
    let dead: Vec<(String, String, i64, i64, String)> = sqlx::query_as(
        "SELECT endpoint, dealership, sequence, attempts, last_error FROM webhook_dead_letters",
    )
    .fetch_all(bridge.gateway.store().pool())
    .await
    .unwrap();
    assert_eq!(
        dead,
        [("hook".into(), "acme".into(), 1, 3, "http_500".into())]
    );
    let lines: Vec<String> = [("dead_lettered", 1), ("retried", 2), ("delivered", 1)]
        .iter()
        .map(|(result, n)| {
            format!(
                r#"dms_bridge_webhook_deliveries_total{{endpoint="hook",result="{result}"}} {n}"#
            )
        })
        .collect();
    let metrics = metrics_having(&bridge, &lines).await;
    for line in &lines {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
    let ready = readyz(bridge.addr).await;
    assert_eq!(ready["webhooks"]["hook"]["dead_letters"], 1, "{ready}");
    assert_eq!(
        ready["webhooks"]["hook"]["state"], "dead_letters",
        "{ready}"
    );
    assert_eq!(ready["store"], "ok");
}

#[tokio::test]
async fn a_receiver_that_comes_up_late_gets_the_backlog_in_order() {
    let addr = free_addr();
    let url = format!("http://{addr}/webhooks");
    let (bridge, client, _intake) = bridge(&url, "max_attempts = 1000").await;
    take_leads(&client, 0, 3).await;
    let behind = tokio::time::timeout(WAIT, async {
        loop {
            let ready = readyz(bridge.addr).await;
            let hook = &ready["webhooks"]["hook"];
            if hook["undelivered"].as_u64() == Some(6) && hook["last_error"] == "connection" {
                return ready;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("readyz shows the backlog while the receiver is down");
    assert_eq!(behind["webhooks"]["hook"]["state"], "behind");

    let hooks = serve_receiver(tokio::net::TcpListener::bind(addr).await.unwrap());
    wait_for_all(&hooks, || async { ids(&stored_events(&bridge).await) }).await;
    let deliveries = hooks.deliveries();
    deliveries.iter().for_each(assert_signed);
    assert_eq!(first_deliveries(&deliveries), stored_events(&bridge).await);
    assert!(deliveries.iter().all(|d| !d.repeat));
    tokio::time::timeout(WAIT, async {
        let gauge = r#"dms_bridge_webhook_undelivered_events{endpoint="hook"} 0"#;
        while !metrics_text(&bridge).await.contains(gauge) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the undelivered gauge drops to 0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_killed_mid_backlog_resumes_from_its_cursor_skipping_and_losing_nothing() {
    let (hooks, url) = receiver().await;
    hooks.fail_every(2);
    // Events are posted in order: with the second refused until the kill,
    // the kill comes with a backlog however fast the machine delivers.
    hooks.fail_event("evt_acme_2");
    let intake = accepting_intake().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bridge.db");
    let addr = free_addr();
    let config = leads(&format!("{}/adf/acme", intake.uri()))
        .tail(&hook(&url, "max_attempts = 100").replace("\"20ms\"", "\"150ms\""))
        .tail(&format!(
            "[server]\nlisten = \"{addr}\"\n\n[store]\nurl = \"sqlite://{}\"\n",
            db.display()
        ))
        .render();
    let config_path = dir.path().join("bridge.toml");
    std::fs::write(&config_path, config).unwrap();
    let mcp = format!("http://{addr}/mcp");

    let mut first = start_bridge(&config_path, addr).await;
    take_leads(&connect(&mcp, Some("agent-token")).await, 0, 4).await;
    tokio::time::timeout(WAIT, async {
        while hooks.deliveries().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("delivery got going");
    first.start_kill().unwrap();
    first.wait().await.unwrap();
    let store = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let head = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT COALESCE(MAX(last_sequence), 0) FROM event_heads WHERE dealership = 'acme'",
        )
        .fetch_one(&store)
        .await
        .unwrap()
    };
    let at_kill = first_deliveries(&hooks.deliveries()).len();
    assert!(
        i64::try_from(at_kill).unwrap() < head().await,
        "the kill came with events still to deliver"
    );

    hooks.clear_failures();
    hooks.fail_every(2);
    let _second = start_bridge(&config_path, addr).await;
    take_leads(&connect(&mcp, Some("agent-token")).await, 10, 2).await;
    let all_ids = || async {
        let head = head().await;
        if head < 12 {
            return Vec::new();
        }
        (1..=head).map(|s| format!("evt_acme_{s}")).collect()
    };
    wait_for_all(&hooks, all_ids).await;

    let deliveries = hooks.deliveries();
    deliveries.iter().for_each(assert_signed);
    let first = first_deliveries(&deliveries);
    let sequences: Vec<i64> = first
        .iter()
        .map(|e| e["sequence"].as_i64().unwrap())
        .collect();
    assert_eq!(
        sequences,
        (1..=head().await).collect::<Vec<_>>(),
        "none skipped, in order"
    );
    // The cursor moves once the bridge has read the receiver's answer, a
    // moment after the receiver recorded the delivery.
    let through = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT delivered_through FROM webhook_cursors WHERE endpoint = 'hook' AND dealership = 'acme'",
        )
        .fetch_one(&store)
        .await
        .unwrap()
    };
    let head = head().await;
    tokio::time::timeout(WAIT, async {
        while through().await != head {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the cursor never reached the head {head}"));
    let dead: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM webhook_dead_letters")
        .fetch_one(&store)
        .await
        .unwrap();
    assert_eq!(dead, 0);
}

#[tokio::test]
async fn a_new_endpoint_starts_at_the_head_and_gets_only_types_it_takes() {
    let (hooks, url) = receiver().await;
    let intake = accepting_intake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = format!(
        "[store]\nurl = \"sqlite://{}\"\n",
        dir.path().join("bridge.db").display()
    );
    let base = leads(&format!("{}/adf/acme", intake.uri()));
    // History before the endpoint exists.
    {
        let bridge = with_config(&base.clone().tail(&store).render()).await;
        let client = connect(&bridge.url, Some("agent-token")).await;
        take_leads(&client, 0, 2).await;
        // Both leads and their deliveries: sequences 1 to 4.
        tokio::time::timeout(WAIT, async {
            while stored_events(&bridge).await.len() < 4 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .unwrap();
    }
    let toml = base
        .tail(&hook(&url, "types = [\"lead.created\"]"))
        .tail(&store)
        .render();
    let bridge = with_config(&toml).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    take_leads(&client, 10, 2).await;
    let created = || async {
        stored_events(&bridge)
            .await
            .into_iter()
            .filter(|e| e["type"] == "lead.created" && e["sequence"].as_u64() > Some(4))
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    tokio::time::timeout(WAIT, async {
        while created().await.len() < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    wait_for_all(&hooks, created).await;
    let got: Vec<Value> = first_deliveries(&hooks.deliveries());
    assert!(got.iter().all(|e| e["type"] == "lead.created"), "{got:?}");
    assert!(
        got.iter().all(|e| e["sequence"].as_u64() > Some(4)),
        "no history from before the endpoint: {got:?}"
    );
}

/// A slot the demo's scheduler has open on the next weekday, for demo-cdk.
async fn open_slot(client: &Client) -> String {
    use chrono::{Datelike, Weekday};
    let mut day = chrono::Utc::now().date_naive() + chrono::Duration::days(1);
    while matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
        day += chrono::Duration::days(1);
    }
    let check = serde_json::json!({ "dealership_id": "demo-cdk", "service_codes": ["01LOF"],
        "vin": "1HGCM82633A004352", "from": day.to_string(), "to": day.to_string() });
    let slots = ok(&call(client, "service.check_availability", check).await);
    slots["items"][0]["start"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_demo_receiver_lists_signed_lead_and_appointment_events() {
    let bridge = demo().await;
    let mocks = bridge.mocks.as_ref().unwrap();
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let taken = ok(&call(&client, "leads.create", lead("demo-cdk", 1)).await);
    let consent = common::leads::consent(&["email"]);
    let booking = serde_json::json!({
        "dealership_id": "demo-cdk", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
        "start": open_slot(&client).await,
        "customer": { "first_name": "Dana", "last_name": "Whitfield", "email": "dana@example.com" },
        "consent": { "granted_at": consent["granted_at"], "allowed_channels": ["email"],
                     "consent_text": consent["consent_text"], "scope": ["service_appointment"] }
    });
    let booked = ok(&call(&client, "service.book_appointment", booking).await);
    let cancel = serde_json::json!({ "dealership_id": "demo-cdk", "appointment_id": booked["appointment_id"] });
    ok(&call(&client, "service.cancel_appointment", cancel).await);

    let list = format!("{}/webhooks/deliveries", mocks.webhook_url);
    let wanted = [
        "lead.created",
        "appointment.booked",
        "appointment.cancelled",
    ];
    let types = tokio::time::timeout(WAIT, async {
        loop {
            let listed: Value = common::http_get(&list).await.unwrap().json().await.unwrap();
            assert_eq!(listed["refused_signatures"], 0, "every signature verified");
            let bodies: Vec<Value> = listed["deliveries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| serde_json::from_str(d["body"].as_str().unwrap()).unwrap())
                .collect();
            let types: Vec<String> = bodies
                .iter()
                .filter(|e| e["dealership_id"] == "demo-cdk")
                .map(|e| e["type"].as_str().unwrap().to_owned())
                .collect();
            if wanted.iter().all(|w| types.iter().any(|t| t == w)) {
                let lead_event = bodies.iter().find(|e| e["type"] == "lead.created").unwrap();
                assert_eq!(lead_event["resource"]["id"], taken["lead_id"]);
                return types;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the demo receiver got the lead's and the appointment's events");
    let order: Vec<usize> = wanted
        .iter()
        .map(|w| types.iter().position(|t| t == w).unwrap())
        .collect();
    assert!(order.is_sorted(), "in the order they happened: {types:?}");
}

//! Inbound vendor events (`upstreams.<id>.inbound_events`): a vendor's push
//! to `POST /events/inbound/<upstream>` reads the mirrored inventory at once,
//! whatever the event names, so duplicates, reorderings and unknown units
//! change nothing twice and lose nothing. The upstreams read every hour, so
//! only a push can cause a read within a test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use base64::Engine;
use common::config::Upstream;
use common::inventory::{Inventory, search_all, summary, upstream};
use common::{Bridge, Client, INVENTORY_PATH, call, connect, count, metrics_text, ok};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use wiremock::MockServer;

const SECRET: &str = "push-secret";

/// `acme` on a CDK upstream read every hour that takes inbound events, with
/// `inbound` as more keys of `inbound_events` (events may ask for a read
/// every second unless they name another `min_read_interval`).
fn pushed_with(server: &str, inbound: &str) -> String {
    let interval = if inbound.contains("min_read_interval") {
        ""
    } else {
        r#", min_read_interval = "1s""#
    };
    common::rest(server)
        .edit_upstream("cdk", |u: Upstream| {
            u.set("inventory_sync", "\"1h\"")
                .resilience("{ retries = { max = 0 } }")
                .set(
                    "inbound_events",
                    format!(
                        r#"{{ secret = {{ value = "{SECRET}" }}, max_body = "2KiB"{interval}{inbound} }}"#
                    ),
                )
        })
        .render()
}

/// How a test event authenticates.
enum Auth<'a> {
    Bearer(&'a str),
    Signed(&'a str),
    None,
}

/// An event naming `unit`, as CDK/Fortellis Event Relay sends it.
fn event_body(unit: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "eventType": "inventory.vehicle.updated",
        "data": { "vehicleId": unit, "vin": unit },
    }))
    .unwrap()
}

fn signature(key: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// POSTs `body` to the inbound endpoint of `upstream`; the status code.
async fn push(
    bridge: &Bridge,
    upstream: &str,
    event_id: Option<&str>,
    auth: Auth<'_>,
    body: Vec<u8>,
) -> u16 {
    let mut request = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(format!("http://{}/events/inbound/{upstream}", bridge.addr))
        .header("Content-Type", "application/json")
        .header("X-Request-Id", "req-1")
        .header("Data-Owner-Id", "dealer-org-1");
    if let Some(id) = event_id {
        request = request.header("Fortellis-Event-Id", id);
    }
    request = match auth {
        Auth::Bearer(secret) => request.bearer_auth(secret),
        Auth::Signed(key) => request.header("X-Signature", signature(key, &body)),
        Auth::None => request,
    };
    request.body(body).send().await.unwrap().status().as_u16()
}

/// A valid event `id` naming `unit`; its status code.
async fn push_event(bridge: &Bridge, id: &str, unit: &str) -> u16 {
    push(
        bridge,
        "cdk",
        Some(id),
        Auth::Bearer(SECRET),
        event_body(unit),
    )
    .await
}

/// The bridge on a fresh upstream, its first read done; the inventory reads
/// the upstream has had so far. The first search waits for the first read,
/// whether the background loop or the search makes it, and the loop does
/// not read again before its hour is up: the count is settled.
async fn started() -> (MockServer, Inventory, Bridge, Client, usize) {
    started_with("").await
}

/// [`started`] with more `inbound_events` keys.
async fn started_with(inbound: &str) -> (MockServer, Inventory, Bridge, Client, usize) {
    let (server, inventory) = upstream(100).await;
    let bridge = common::with_config(&pushed_with(&server.uri(), inbound)).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    search_all(&client).await;
    let reads = count(&server, INVENTORY_PATH).await;
    (server, inventory, bridge, client, reads)
}

/// How long a test waits for what a push sets off in the background.
const PATIENCE: Duration = Duration::from_secs(30);

/// Waits (bounded) until the upstream has had more than `reads` reads; the count.
async fn read_after(server: &MockServer, reads: usize) -> usize {
    let deadline = std::time::Instant::now() + PATIENCE;
    while std::time::Instant::now() < deadline {
        let now = count(server, INVENTORY_PATH).await;
        if now > reads {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no upstream read after the push");
}

/// (type, vin) of acme's events.
async fn vehicle_events(client: &Client) -> Vec<(String, String)> {
    let page = ok(&call(
        client,
        "events.list",
        json!({ "dealership_id": "acme", "limit": 100 }),
    )
    .await);
    summary(&page)
}

/// Polls (bounded) until acme has `wanted` events; then they are.
async fn events_once_there(client: &Client, wanted: usize) -> Vec<(String, String)> {
    let deadline = std::time::Instant::now() + PATIENCE;
    while std::time::Instant::now() < deadline {
        let events = vehicle_events(client).await;
        if events.len() >= wanted {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    vehicle_events(client).await
}

fn updated(vin: &str) -> (String, String) {
    ("vehicle.updated".to_owned(), vin.to_owned())
}

#[tokio::test]
async fn a_pushed_event_reads_the_inventory_at_once() {
    let (server, inventory, bridge, client, reads) = started().await;
    let raised = inventory.raise_price(inventory.listed_with_selling_price(0));
    assert_eq!(push_event(&bridge, "evt-1", &raised).await, 202);
    read_after(&server, reads).await;
    assert_eq!(events_once_there(&client, 1).await, [updated(&raised)]);
    let metrics = metrics_text(&bridge).await;
    assert!(
        metrics.contains(r#"dms_bridge_inbound_events_total{upstream="cdk",outcome="accepted"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_redelivered_event_reads_once_at_most() {
    let (server, inventory, bridge, client, reads) = started().await;
    let raised = inventory.raise_price(inventory.listed_with_selling_price(0));
    let together = (0..5).map(|_| push_event(&bridge, "evt-dup", &raised));
    assert_eq!(futures::future::join_all(together).await, [202; 5]);
    for _ in 0..5 {
        assert_eq!(push_event(&bridge, "evt-dup", &raised).await, 202);
    }
    read_after(&server, reads).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = count(&server, INVENTORY_PATH).await;
    assert_eq!(after, reads + 1, "one event id, ten deliveries, one read");
    assert_eq!(events_once_there(&client, 1).await, [updated(&raised)]);
    let metrics = metrics_text(&bridge).await;
    for (outcome, n) in [("accepted", 1), ("duplicate", 9)] {
        let line =
            format!(r#"dms_bridge_inbound_events_total{{upstream="cdk",outcome="{outcome}"}} {n}"#);
        assert!(metrics.contains(&line), "{line} in {metrics}");
    }
}

#[tokio::test]
async fn unknown_units_and_reordered_events_give_exactly_the_true_changes() {
    let (server, inventory, bridge, client, reads) = started().await;
    let raised = inventory.raise_price(inventory.listed_with_selling_price(0));
    // MVS2 reports a sold unit flagged `deleted` (what a changes-since read sees).
    let sold = inventory.mark_deleted(inventory.listed_with_selling_price(5));
    // Delivered out of order, one naming a unit the dealership never had.
    assert_eq!(push_event(&bridge, "evt-3", "NO-SUCH-UNIT").await, 202);
    let seen = read_after(&server, reads).await;
    assert_eq!(push_event(&bridge, "evt-2", &sold).await, 202);
    assert_eq!(push_event(&bridge, "evt-1", &raised).await, 202);
    read_after(&server, seen).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut events = events_once_there(&client, 2).await;
    events.sort();
    assert_eq!(
        events,
        [
            ("vehicle.deleted".to_owned(), sold.clone()),
            updated(&raised)
        ],
        "each change once, nothing for the unknown unit"
    );
}

#[tokio::test]
async fn refused_events_read_nothing() {
    let (server, _inventory, bridge, _client, reads) = started().await;
    let body = event_body("X");
    let wrong_signature = push(
        &bridge,
        "cdk",
        Some("e"),
        Auth::Signed("guess"),
        body.clone(),
    );
    assert_eq!(wrong_signature.await, 401);
    let wrong_bearer = push(
        &bridge,
        "cdk",
        Some("e"),
        Auth::Bearer("guess"),
        body.clone(),
    );
    assert_eq!(wrong_bearer.await, 401);
    assert_eq!(
        push(&bridge, "cdk", Some("e"), Auth::None, body.clone()).await,
        401
    );
    let big = vec![b' '; 3 * 1024];
    assert_eq!(
        push(&bridge, "cdk", Some("e"), Auth::Bearer(SECRET), big.clone()).await,
        413
    );
    assert_eq!(
        push(&bridge, "cdk", Some("e"), Auth::None, big).await,
        413,
        "size first"
    );
    let no_id = push(&bridge, "cdk", None, Auth::Bearer(SECRET), body.clone());
    assert_eq!(no_id.await, 400);
    let not_json = push(
        &bridge,
        "cdk",
        Some("e"),
        Auth::Bearer(SECRET),
        b"{nope".to_vec(),
    );
    assert_eq!(not_json.await, 400);
    let elsewhere = push(&bridge, "nope", Some("e"), Auth::Bearer(SECRET), body);
    assert_eq!(elsewhere.await, 404);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        reads,
        "no read for any of them"
    );
    let metrics = metrics_text(&bridge).await;
    for (outcome, n) in [("unauthorized", 3), ("too_large", 2), ("invalid", 2)] {
        let line =
            format!(r#"dms_bridge_inbound_events_total{{upstream="cdk",outcome="{outcome}"}} {n}"#);
        assert!(metrics.contains(&line), "{line} in {metrics}");
    }
    // Refused, the id was not taken: the same id with the secret is accepted.
    assert_eq!(push_event(&bridge, "e", "X").await, 202);
}

#[tokio::test]
async fn a_signed_event_is_accepted() {
    let (server, inventory, bridge, client, reads) = started().await;
    let raised = inventory.raise_price(inventory.listed_with_selling_price(0));
    let signed = push(
        &bridge,
        "cdk",
        Some("evt-s"),
        Auth::Signed(SECRET),
        event_body(&raised),
    );
    assert_eq!(signed.await, 202);
    read_after(&server, reads).await;
    assert_eq!(events_once_there(&client, 1).await, [updated(&raised)]);
}

#[tokio::test]
async fn the_demo_cdk_pushes_its_price_drops() {
    let bridge = common::demo().await;
    let mocks = bridge.mocks.as_ref().unwrap();
    mocks.cdk.push_events_to(&format!(
        "http://{}/events/inbound/cdk-riverside",
        bridge.addr
    ));
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    ok(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk", "limit": 1 }),
    )
    .await);
    let url = format!("{}/cdk/admin/price-drop", mocks.cdk_url);
    let answer = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(url)
        .send()
        .await
        .unwrap();
    let dropped: Value = answer.json().await.unwrap();
    assert_eq!(dropped["event_answered"], 202, "{dropped}");
    let vin = dropped["vin"].as_str().unwrap();
    let args = json!({ "dealership_id": "demo-cdk", "types": ["vehicle.updated"], "limit": 100 });
    let deadline = std::time::Instant::now() + PATIENCE;
    while std::time::Instant::now() < deadline {
        let page = ok(&call(&client, "events.list", args.clone()).await);
        let events = page["items"].as_array().unwrap();
        if let Some(event) = events.iter().find(|e| e["data"]["vin"] == vin) {
            assert!(
                event["data"]["changed"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("price")),
                "{event}"
            );
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no vehicle.updated event for {vin}");
}

#[tokio::test]
async fn an_event_the_store_cannot_record_is_refused_for_redelivery() {
    let (server, _inventory, bridge, _client, reads) = started().await;
    sqlx::query("DROP TABLE inbound_events")
        .execute(bridge.gateway.store().pool())
        .await
        .unwrap();
    assert_eq!(push_event(&bridge, "evt-lost", "X").await, 503);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(count(&server, INVENTORY_PATH).await, reads, "no read");
    let metrics = metrics_text(&bridge).await;
    assert!(
        metrics.contains(r#"dms_bridge_inbound_events_total{upstream="cdk",outcome="failed"} 1"#),
        "{metrics}"
    );
}

/// A captured body-signed push sent again under new event ids (an outside
/// audit replayed one 20 times and got 20 inventory reads at the vendor): the
/// first is taken, the others are refused as replays and read nothing.
#[tokio::test]
async fn a_captured_signed_push_replayed_under_new_ids_is_refused_and_reads_nothing() {
    let (server, inventory, bridge, client, reads) = started().await;
    let raised = inventory.raise_price(inventory.listed_with_selling_price(0));
    let body = event_body(&raised);
    let first = push(
        &bridge,
        "cdk",
        Some("evt-1"),
        Auth::Signed(SECRET),
        body.clone(),
    );
    assert_eq!(first.await, 202);
    read_after(&server, reads).await;
    // The read is over once its event is recorded.
    assert_eq!(events_once_there(&client, 1).await, [updated(&raised)]);
    let settled = count(&server, INVENTORY_PATH).await;
    for n in 2..=20 {
        let id = format!("evt-{n}");
        let replay = push(
            &bridge,
            "cdk",
            Some(&id),
            Auth::Signed(SECRET),
            body.clone(),
        );
        assert_eq!(replay.await, 409, "{id}");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        settled,
        "no read for a replay"
    );
    let metrics = metrics_text(&bridge).await;
    let line = r#"dms_bridge_inbound_events_total{upstream="cdk",outcome="replayed"} 19"#;
    assert!(metrics.contains(line), "{line} in {metrics}");
}

/// However fast a vendor pushes, events ask one dealership's inventory for
/// at most one read per `min_read_interval` (an hour here): the first event
/// reads at once, nine more in a row read nothing now.
#[tokio::test]
async fn pushes_faster_than_the_read_interval_make_one_read() {
    let (server, inventory, bridge, client, reads) =
        started_with(r#", min_read_interval = "1h""#).await;
    let raised = inventory.raise_price(inventory.listed_with_selling_price(0));
    assert_eq!(push_event(&bridge, "evt-0", &raised).await, 202);
    read_after(&server, reads).await;
    assert_eq!(events_once_there(&client, 1).await, [updated(&raised)]);
    let settled = count(&server, INVENTORY_PATH).await;
    for n in 1..10 {
        assert_eq!(
            push_event(&bridge, &format!("evt-{n}"), &format!("UNIT-{n}")).await,
            202
        );
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(count(&server, INVENTORY_PATH).await, settled);
}

/// A Standard Webhooks signature over `id.timestamp.body`, base64.
fn standard_signature(id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    let digest = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    format!("v1,{digest}")
}

/// A push signed Standard Webhooks style; its status code.
async fn push_standard(
    bridge: &Bridge,
    id: &str,
    timestamp: i64,
    signature: &str,
    body: Vec<u8>,
) -> u16 {
    dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(format!("http://{}/events/inbound/cdk", bridge.addr))
        .header("Content-Type", "application/json")
        .header("webhook-id", id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Where the vendor signs Standard Webhooks style, the event id and a time
/// are signed too: a captured push is refused under another id, and after
/// five minutes under its own; its own id within them is a redelivery.
#[tokio::test]
async fn a_standard_webhooks_signature_binds_the_event_id_and_its_time() {
    let (server, inventory, bridge, client, reads) =
        started_with(r#", signing = "standard_webhooks""#).await;
    let raised = inventory.raise_price(inventory.listed_with_selling_price(0));
    let body = event_body(&raised);
    let now = chrono::Utc::now().timestamp();
    let signature = standard_signature("msg_1", now, &body);
    assert_eq!(
        push_standard(&bridge, "msg_1", now, &signature, body.clone()).await,
        202
    );
    read_after(&server, reads).await;
    assert_eq!(events_once_there(&client, 1).await, [updated(&raised)]);
    let settled = count(&server, INVENTORY_PATH).await;

    // The same signature under another id; a true signature ten minutes old.
    assert_eq!(
        push_standard(&bridge, "msg_2", now, &signature, body.clone()).await,
        401
    );
    let old = now - 600;
    let old_signature = standard_signature("msg_3", old, &body);
    assert_eq!(
        push_standard(&bridge, "msg_3", old, &old_signature, body.clone()).await,
        401
    );
    // A body-only signature does not do here.
    let body_only = push(
        &bridge,
        "cdk",
        Some("msg_4"),
        Auth::Signed(SECRET),
        body.clone(),
    );
    assert_eq!(body_only.await, 401);
    // The vendor's own redelivery of msg_1: taken again, read once only.
    assert_eq!(
        push_standard(&bridge, "msg_1", now, &signature, body).await,
        202
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(count(&server, INVENTORY_PATH).await, settled);
}

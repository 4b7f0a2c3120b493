//! Replicas of the real binary on one PostgreSQL database: background work
//! is done once for the group (one replica reads each inventory and records
//! each change once; the others follow it and take over when it dies), and a
//! write on one replica retires the cached reads of the others, and each
//! event reaches a webhook once, whichever replica recorded it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::config::{Dealership, Token, Upstream, quoted};
use common::inventory::{index_of, search_all, summary, upstream, vins_of};
use common::leads::{accepting_intake, lead, leads};
use common::process::{free_addr, start_bridge};
use common::{Client, INVENTORY_PATH, call, connect, count, ok, postgres};
use dms_bridge_testkit::mock_webhooks::MockWebhooks;
use dms_bridge_testkit::mock_xtime;
use serde_json::{Value, json};

/// Writes `toml` with this replica's `[server] listen` and the shared store, and starts it.
async fn replica(
    dir: &std::path::Path,
    name: &str,
    toml: &str,
    store: &str,
) -> (SocketAddr, tokio::process::Child) {
    let addr = free_addr();
    let path = dir.join(format!("{name}.toml"));
    let config = format!(
        "{toml}\n[server]\nlisten = \"{addr}\"\n\n[store]\nurl = {}\n",
        quoted(store)
    );
    std::fs::write(&path, config).unwrap();
    (addr, start_bridge(&path, addr).await)
}

fn price_of(client_answer: &Value) -> Value {
    client_answer["vehicle"]["price"].clone()
}

async fn get_vehicle(client: &Client, vin: &str) -> Value {
    ok(&call(
        client,
        "inventory.get",
        json!({ "dealership_id": "acme", "vin": vin }),
    )
    .await)
}

/// `acme`'s events about `vin`, as (type, vin).
async fn events_about(client: &Client, vin: &str) -> Vec<(String, String)> {
    let page = ok(&call(
        client,
        "events.list",
        json!({ "dealership_id": "acme", "limit": 100 }),
    )
    .await);
    summary(&page)
        .into_iter()
        .filter(|(_, v)| v == vin)
        .collect()
}

/// The inventory reads of `acme` the replica at `addr` has made (its
/// `dms_bridge_mirror_syncs_total`, 0 before its first).
async fn reads_by(addr: SocketAddr) -> f64 {
    let series = r#"dms_bridge_mirror_syncs_total{dealership="acme",outcome="ok"}"#;
    common::process::series(addr, series).await.unwrap_or(0.0)
}

/// Over `window`, exactly one of the replicas at `addrs` reads `acme`'s
/// inventory (at least once) and the others read nothing: what the lease
/// controls, whatever the machine's speed. The reader's index.
async fn one_reader_among(addrs: &[SocketAddr], window: Duration) -> usize {
    let mut before = Vec::new();
    for addr in addrs {
        before.push(reads_by(*addr).await);
    }
    tokio::time::sleep(window).await;
    let mut moved = Vec::new();
    for (i, addr) in addrs.iter().enumerate() {
        let reads = reads_by(*addr).await - before[i];
        if reads > 0.0 {
            moved.push(i);
        }
    }
    assert_eq!(
        moved.len(),
        1,
        "replicas {moved:?} of {} read the inventory within {window:?}",
        addrs.len()
    );
    moved[0]
}

/// Waits (at most `within`) until `client` lists an event about `vin`.
async fn wait_event(client: &Client, vin: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while events_about(client, vin).await.is_empty() {
        assert!(
            Instant::now() < deadline,
            "no event about {vin} within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits (at most `within`) until `client` answers `vin` at a price other than `old`.
async fn wait_price_change(client: &Client, vin: &str, old: &Value, within: Duration) {
    let deadline = Instant::now() + within;
    while price_of(&get_vehicle(client, vin).await) == *old {
        assert!(
            Instant::now() < deadline,
            "the new price of {vin} did not show within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_replica_reads_each_inventory_the_others_follow_and_one_takes_over() {
    let store = postgres::fresh_database().await;
    let (server, inventory) = upstream(100).await;
    let toml = common::rest(&server.uri())
        .edit_upstream("cdk", |u: Upstream| {
            u.set("inventory_sync", quoted("1s"))
                .resilience("{ retries = { max = 0 } }")
        })
        .render();
    let dir = tempfile::tempdir().unwrap();
    // The first replica up takes the dealership's mirror lease.
    let mut processes = Vec::new();
    let mut clients = Vec::new();
    let mut addrs = Vec::new();
    for name in ["first", "second", "third"] {
        let (addr, process) = replica(dir.path(), name, &toml, &store).await;
        processes.push(process);
        addrs.push(addr);
        clients.push(connect(&format!("http://{addr}/mcp"), Some("acme-token")).await);
    }
    let listed: Vec<String> = vins_of(&search_all(&clients[0]).await)
        .into_iter()
        .collect();
    for client in &clients[1..] {
        assert_eq!(vins_of(&search_all(client).await).len(), listed.len());
    }

    // Three replicas with a 1 s interval: one of them reads, the first up.
    let before = count(&server, INVENTORY_PATH).await;
    assert_eq!(one_reader_among(&addrs, Duration::from_secs(5)).await, 0);
    assert!(count(&server, INVENTORY_PATH).await > before);

    // A price change: one event, and every replica answers the new price.
    let vin = listed[4].clone();
    let old = price_of(&get_vehicle(&clients[2], &vin).await);
    inventory.raise_price(index_of(&inventory, &vin));
    wait_event(&clients[1], &vin, Duration::from_secs(10)).await;
    for client in &clients {
        wait_price_change(client, &vin, &old, Duration::from_secs(5)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        events_about(&clients[2], &vin).await,
        vec![("vehicle.updated".to_owned(), vin.clone())],
        "one change, one event, whichever replica reads"
    );

    // The reader dies: another takes the reading over and records the next change once.
    let mut first = processes.remove(0);
    first.start_kill().unwrap();
    first.wait().await.unwrap();
    addrs.remove(0);
    let next = listed[9].clone();
    let old = price_of(&get_vehicle(&clients[1], &next).await);
    inventory.raise_price(index_of(&inventory, &next));
    wait_event(&clients[1], &next, Duration::from_secs(40)).await;
    for client in &clients[1..] {
        wait_price_change(client, &next, &old, Duration::from_secs(5)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        events_about(&clients[2], &next).await,
        vec![("vehicle.updated".to_owned(), next.clone())]
    );
    one_reader_among(&addrs, Duration::from_secs(4)).await;
}

/// `acme` booking through the Xtime-shaped mock at `vendor`, availability kept 60 s.
fn service_config(vendor: &str) -> String {
    let hours = r#"[{ department = "service", weekly = { monday = "07:00-18:00", tuesday = "07:00-18:00", wednesday = "07:00-18:00", thursday = "07:00-18:00", friday = "07:00-18:00" } }]"#;
    common::config::BridgeConfig::new()
        .section("cache", r#"ttl = { service = "60s" }"#)
        .dealership(
            Dealership::acme()
                .set("hours", hours)
                .route("service", "xtime"),
        )
        .upstream("xtime", common::service::mock_xtime_upstream(vendor))
        .token(Token::new(
            "agent",
            "agent-token",
            &["acme"],
            &["amcp:service:read", "amcp:service:write"],
        ))
        .render()
}

async fn availability(client: &Client, day: &str) -> (Vec<String>, bool) {
    let result = call(
        client,
        "service.check_availability",
        json!({ "dealership_id": "acme", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
                "from": day, "to": day }),
    )
    .await;
    let hit = result
        .meta
        .as_ref()
        .and_then(|m| m.get("io.dms-bridge/cache"))
        .is_some_and(|c| c["hit"] == true);
    let starts = ok(&result)["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["start"].as_str().unwrap().to_owned())
        .collect();
    (starts, hit)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_booking_on_one_replica_retires_the_others_cached_availability() {
    let store = postgres::fresh_database().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let vendor = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, mock_xtime::router()).await.unwrap() });
    let toml = service_config(&vendor);
    let dir = tempfile::tempdir().unwrap();
    let (a, _first) = replica(dir.path(), "a", &toml, &store).await;
    let (b, _second) = replica(dir.path(), "b", &toml, &store).await;
    let on_a = connect(&format!("http://{a}/mcp"), Some("agent-token")).await;
    let on_b = connect(&format!("http://{b}/mcp"), Some("agent-token")).await;

    let day = common::service::next_weekday();
    let (open, _) = availability(&on_b, &day).await;
    let (again, hit) = availability(&on_b, &day).await;
    assert!(hit, "B keeps availability for 60 s");
    assert_eq!(open, again);
    let slot = open[0].clone();

    let booking = json!({
        "dealership_id": "acme", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
        "start": slot,
        "customer": { "first_name": "Dana", "last_name": "Whitfield", "email": "dana@example.com" },
        "consent": common::service::consent("service_appointment"),
    });
    let booked = ok(&call(&on_a, "service.book_appointment", booking).await);
    assert_eq!(booked["status"], "booked", "{booked}");
    let written = Instant::now();
    // The bound the README states: one NOTIFY round trip. Fifteen seconds is
    // far above it on any machine and far below the 60 s the entry would live.
    loop {
        let (starts, _) = availability(&on_b, &day).await;
        if !starts.contains(&slot) {
            break;
        }
        assert!(
            written.elapsed() < Duration::from_secs(15),
            "B still offers the slot A booked"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "B stopped offering the booked slot {:?} after A's answer",
        written.elapsed()
    );
}

const WEBHOOK_SECRET: &str = "whsec_dGVzdC13ZWJob29rLXNpZ25pbmcta2V5LTMyYnl0ZXM=";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_post_each_event_to_a_webhook_once() {
    let store = postgres::fresh_database().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_url = format!("http://{}/webhooks", listener.local_addr().unwrap());
    let receiver = MockWebhooks::new(WEBHOOK_SECRET).unwrap();
    let router = receiver.router();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let intake = accepting_intake().await;
    let toml = leads(&format!("{}/adf/acme", intake.uri()))
        .tail(&format!(
            "[webhooks.hook]\nurl = {}\nsecret = {{ value = {} }}\ndealerships = [\"acme\"]\n",
            quoted(&hook_url),
            quoted(WEBHOOK_SECRET)
        ))
        .render();
    let dir = tempfile::tempdir().unwrap();
    let mut clients = Vec::new();
    let mut _processes = Vec::new();
    for name in ["first", "second", "third"] {
        let (addr, process) = replica(dir.path(), name, &toml, &store).await;
        _processes.push(process);
        clients.push(connect(&format!("http://{addr}/mcp"), Some("agent-token")).await);
    }

    // Leads on every replica: each makes a lead.created and a delivery event.
    for n in 0..30 {
        ok(&call(&clients[n % 3], "leads.create", lead("acme", n)).await);
    }
    let pool = sqlx::PgPool::connect(&store).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let logged = loop {
        let logged: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM events")
            .fetch_one(&pool)
            .await
            .unwrap();
        let delivered = receiver.deliveries().len() as i64;
        if logged >= 60 && delivered == logged {
            break logged;
        }
        assert!(
            Instant::now() < deadline,
            "{delivered} of {logged} events posted within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Time for any second deliverer to post what it would post again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let deliveries = receiver.deliveries();
    let ids: std::collections::BTreeSet<&str> = deliveries.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids.len() as i64, logged, "every event posted");
    assert_eq!(
        receiver.requests(),
        deliveries.len(),
        "the receiver refused none"
    );
    let repeats = deliveries.iter().filter(|d| d.repeat).count();
    assert_eq!(repeats, 0, "an event was posted more than once");
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe: what clients of the initialize era send
async fn a_subscription_made_through_one_replica_is_told_on_anothers_stream() {
    const EVENTS: &str = "dms://dealerships/acme/events";
    let store = postgres::fresh_database().await;
    let intake = accepting_intake().await;
    let toml = leads(&format!("{}/adf/acme", intake.uri())).render();
    let dir = tempfile::tempdir().unwrap();
    let (holding, mut holding_process) = replica(dir.path(), "holding", &toml, &store).await;
    let (writing, _writing_process) = replica(dir.path(), "writing", &toml, &store).await;

    // A client of the initialize era without a session: its GET went to one
    // replica, its subscribe and its lead to the other.
    let mut stream =
        common::updates_stream(&format!("http://{holding}/mcp"), Some("agent-token")).await;
    let client = connect(&format!("http://{writing}/mcp"), Some("agent-token")).await;
    client
        .peer()
        .subscribe(rmcp::model::SubscribeRequestParams::new(EVENTS))
        .await
        .unwrap();
    ok(&call(&client, "leads.create", lead("acme", 1)).await);
    assert_eq!(common::next_stream_update(&mut stream).await, EVENTS);

    // Open streams, a GET and a 2026-07-28 listen, do not hold the replica's
    // shutdown open.
    let modern = common::modern_client(
        &format!("http://{holding}/mcp"),
        "agent-token",
        rmcp::model::ClientCapabilities::default(),
    )
    .await;
    let filter = rmcp::model::SubscriptionFilter::builder()
        .resource_subscription(EVENTS)
        .build();
    let _listening = modern.peer().listen(filter).await.unwrap();
    let pid = holding_process.id().unwrap().to_string();
    let signalled = tokio::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .await
        .unwrap();
    assert!(signalled.success());
    let exit = tokio::time::timeout(Duration::from_secs(30), holding_process.wait())
        .await
        .expect("the replica did not exit within 30 s of SIGTERM")
        .unwrap();
    assert_eq!(exit.code(), Some(0), "exit status {exit}");
}

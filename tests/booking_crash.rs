//! A booking is recorded before it reaches the scheduler (issue 27: the
//! scheduler booked first and the record and its event came after, so a
//! crash in between lost both, and a retry with the same key booked twice).
//!
//! The real binary books through the test kit's Xtime-shaped scheduler,
//! whose answer to a booking is held back; the bridge is SIGKILLed while it
//! waits, after the scheduler has booked. Restarted on the same store:
//! - a retry with the same idempotency key sends the booking again under the
//!   same reference, the scheduler answers the appointment it made, and the
//!   caller gets it: one appointment, one record, one `appointment.booked`;
//! - a booking nobody retries is sent again by the bridge itself, with the
//!   same outcome.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use common::config::{BridgeConfig, Dealership, Token, quoted};
use common::process::{free_addr, start_bridge};
use common::{call, connect, ok};
use dms_bridge_testkit::mock_xtime;
use serde_json::{Value, json};

/// The scheduler's answers to booking requests, in order (appointment ids),
/// and whether the next booking's answer is held back.
#[derive(Clone, Default)]
struct Scheduler {
    answered: Arc<Mutex<Vec<String>>>,
    arrived: Arc<Mutex<usize>>,
    hold_next: Arc<AtomicBool>,
}

async fn scheduler_answer(scheduler: Scheduler, request: Request, next: Next) -> Response {
    let booking = request.method() == axum::http::Method::POST
        && request.uri().path() == "/service/appointments-bookings";
    if !booking {
        return next.run(request).await;
    }
    *scheduler.arrived.lock().unwrap() += 1;
    let hold = scheduler.hold_next.swap(false, Ordering::SeqCst);
    // The scheduler books (the handler runs) before its answer is held back.
    let (parts, body) = next.run(request).await.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    if let Some(id) = answer["appointmentId"].as_str() {
        scheduler.answered.lock().unwrap().push(id.to_owned());
    }
    if hold {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    Response::from_parts(parts, Body::from(bytes))
}

async fn start_scheduler() -> (String, Scheduler) {
    let scheduler = Scheduler::default();
    let state = scheduler.clone();
    let router = mock_xtime::router().layer(axum::middleware::from_fn(
        move |request: Request, next: Next| scheduler_answer(state.clone(), request, next),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (url, scheduler)
}

fn config(listen: SocketAddr, store: &str, scheduler: &str) -> String {
    let hours = r#"[{ department = "service", weekly = { monday = "07:00-18:00", tuesday = "07:00-18:00", wednesday = "07:00-18:00", thursday = "07:00-18:00", friday = "07:00-18:00" } }]"#;
    BridgeConfig::new()
        // A send is its call's alone for twice this: 8 s.
        .call_timeout("4s")
        .no_cache()
        .section(
            "server",
            &format!("listen = {}", quoted(&listen.to_string())),
        )
        .section("store", &format!("url = {}", quoted(store)))
        .dealership(
            Dealership::acme()
                .set("hours", hours)
                .route("service", "xtime"),
        )
        .upstream(
            "xtime",
            common::service::mock_xtime_upstream(scheduler).resilience("{ retries = { max = 0 } }"),
        )
        .token(Token::new(
            "agent",
            "agent-token",
            &["acme"],
            &["amcp:service:read", "amcp:service:write"],
        ))
        .render()
}

async fn open_starts(client: &common::Client, day: &str) -> Vec<String> {
    let args = json!({ "dealership_id": "acme", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352", "from": day, "to": day });
    ok(&call(client, "service.check_availability", args).await)["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["start"].as_str().unwrap().to_owned())
        .collect()
}

fn booking(start: &str, key: Option<&str>) -> Value {
    let mut args = json!({
        "dealership_id": "acme", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
        "start": start,
        "customer": { "first_name": "Dana", "last_name": "Whitfield", "email": "dana@example.com" },
        "consent": common::service::consent("service_appointment"),
    });
    if let Some(key) = key {
        args["idempotency_key"] = json!(key);
    }
    args
}

/// Books `args` on the bridge at `url` and SIGKILLs `bridge` once the
/// scheduler has booked and is holding its answer back.
async fn book_and_kill(
    url: &str,
    args: Value,
    scheduler: &Scheduler,
    bridge: &mut tokio::process::Child,
) {
    let before = *scheduler.arrived.lock().unwrap();
    scheduler.hold_next.store(true, Ordering::SeqCst);
    let client = connect(url, Some("agent-token")).await;
    let in_flight = tokio::spawn(async move {
        let Value::Object(map) = args else {
            unreachable!()
        };
        let request =
            rmcp::model::CallToolRequestParams::new("service.book_appointment").with_arguments(map);
        let _ = client.call_tool(request).await;
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while *scheduler.arrived.lock().unwrap() == before {
        assert!(
            Instant::now() < deadline,
            "the booking never reached the scheduler"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    bridge.start_kill().unwrap();
    bridge.wait().await.unwrap();
    in_flight.abort();
}

async fn booked_events(pool: &sqlx::SqlitePool) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT resource_id FROM events WHERE event_type = 'appointment.booked' ORDER BY sequence",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

async fn booking_rows(pool: &sqlx::SqlitePool) -> Vec<(String, Option<String>)> {
    sqlx::query_as("SELECT state, appointment_id FROM service_bookings ORDER BY created_at")
        .fetch_all(pool)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_booking_cut_short_by_a_crash_is_one_appointment_one_record_one_event() {
    let (scheduler_url, scheduler) = start_scheduler().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bridge.db");
    let store = format!("sqlite://{}", db.display());
    let addr = free_addr();
    let path = dir.path().join("bridge.toml");
    std::fs::write(&path, config(addr, &store, &scheduler_url)).unwrap();
    let url = format!("http://{addr}/mcp");
    let day = common::service::next_weekday();

    // 1. Killed while the scheduler holds its answer; the caller retries with its key.
    let mut bridge = start_bridge(&path, addr).await;
    let client = connect(&url, Some("agent-token")).await;
    let starts = open_starts(&client, &day).await;
    let first = booking(&starts[0], Some("visit-1"));
    book_and_kill(&url, first.clone(), &scheduler, &mut bridge).await;
    let mut bridge = start_bridge(&path, addr).await;
    let client = connect(&url, Some("agent-token")).await;
    // The dead call's hold on its key lapses after twice the call deadline;
    // until then a retry is told to try again, as an agent would.
    let deadline = Instant::now() + Duration::from_secs(60);
    let retried = loop {
        let answer = call(&client, "service.book_appointment", first.clone()).await;
        if answer.is_error != Some(true) {
            break ok(&answer);
        }
        let error = common::err(&answer);
        assert_eq!(error["retryable"], true, "{error}");
        assert!(Instant::now() < deadline, "no answer to the retry: {error}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let answered = scheduler.answered.lock().unwrap().clone();
    assert_eq!(answered.len(), 2, "sent twice: {answered:?}");
    assert_eq!(answered[0], answered[1], "one appointment: {answered:?}");
    assert_eq!(retried["status"], "booked", "{retried}");
    assert_eq!(retried["appointment_id"], answered[0].as_str());

    // 2. Killed the same way, and nobody retries: the bridge sends it again.
    let second = booking(&starts[1], None);
    book_and_kill(&url, second, &scheduler, &mut bridge).await;
    let _bridge = start_bridge(&path, addr).await;
    let pool = sqlx::SqlitePool::connect(&store).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = booking_rows(&pool).await;
        if rows.len() == 2 && rows.iter().all(|(state, _)| state == "settled") {
            break;
        }
        assert!(Instant::now() < deadline, "still unsettled: {rows:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let answered = scheduler.answered.lock().unwrap().clone();
    assert_eq!(answered.len(), 4, "{answered:?}");
    assert_eq!(answered[2], answered[3], "one appointment: {answered:?}");
    assert_ne!(answered[0], answered[2]);
    let rows = booking_rows(&pool).await;
    let ids: Vec<Option<String>> = rows.into_iter().map(|(_, id)| id).collect();
    assert_eq!(ids, [Some(answered[0].clone()), Some(answered[2].clone())]);
    assert_eq!(
        booked_events(&pool).await,
        [answered[0].clone(), answered[2].clone()],
        "one appointment.booked each"
    );
}

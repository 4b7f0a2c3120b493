//! Resource subscriptions fed by the event log, with rmcp's own clients: a
//! 2026-07-28 client's `subscriptions/listen` (stateless HTTP), and a
//! 2025-11-25 client's `resources/subscribe` on a stateful session. A
//! subscriber hears about events it may see and nothing else.
// The 2025-era `resources/subscribe` is what this file tests for old clients.
#![allow(clippy::unwrap_used, clippy::expect_used, deprecated)]

use crate::common;

use std::time::Duration;

use common::config::Token;
use common::leads::{accepting_intake, lead, leads};
use common::{call, connect, ok};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ServerNotification, SubscribeRequestParams,
    SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::mpsc;

const EVENTS: &str = "dms://dealerships/acme/events";

fn config(server: &str) -> String {
    leads("http://127.0.0.1:9/adf/acme")
        .token(Token::new(
            "agent2",
            "agent2-token",
            &["acme"],
            &["amcp:leads:write", "amcp:leads:read"],
        ))
        .section("server", server)
        .render()
}

async fn bridge(server: &str) -> (wiremock::MockServer, common::Bridge) {
    let intake = accepting_intake().await;
    let toml = config(server).replace("http://127.0.0.1:9", &intake.uri());
    (intake, common::with_config(&toml).await)
}

/// A 2026-07-28 client (no `initialize`, no session).
async fn modern(url: &str, token: &str) -> RunningService<RoleClient, ClientConfig> {
    common::modern_client(url, token, ClientCapabilities::default()).await
}

/// The URI of the next `notifications/resources/updated`, or `None` after `within`.
async fn next_update(
    subscription: &mut rmcp::service::Subscription,
    within: Duration,
) -> Option<String> {
    loop {
        match tokio::time::timeout(within, subscription.next()).await {
            Err(_) => return None,
            Ok(Ok(Some(ServerNotification::ResourceUpdatedNotification(n)))) => {
                return Some(n.params.uri);
            }
            Ok(Ok(Some(_))) => continue,
            Ok(other) => panic!("subscription ended: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_listening_client_hears_of_its_own_events_and_no_one_elses() {
    let (_intake, bridge) = bridge("").await;
    let agent = modern(&bridge.url, "agent-token").await;
    let other = modern(&bridge.url, "agent2-token").await;

    let lead_uri = "dms://dealerships/acme/leads/not-yet";
    let filter = SubscriptionFilter::builder()
        .resource_subscription(EVENTS)
        .resource_subscription(lead_uri)
        .resource_subscription("https://example.com/elsewhere")
        .build();
    let mut mine = agent.peer().listen(filter).await.unwrap();
    let accepted = mine.acknowledged().resource_subscriptions.clone().unwrap();
    assert_eq!(accepted, vec![EVENTS.to_owned(), lead_uri.to_owned()]);
    let only_events = SubscriptionFilter::builder()
        .resource_subscription(EVENTS)
        .build();
    let mut theirs = other.peer().listen(only_events).await.unwrap();

    let writer = connect(&bridge.url, Some("agent-token")).await;
    ok(&call(&writer, "leads.create", lead("acme", 1)).await);
    assert_eq!(
        next_update(&mut mine, Duration::from_secs(10))
            .await
            .as_deref(),
        Some(EVENTS)
    );
    assert_eq!(
        next_update(&mut theirs, Duration::from_millis(1500)).await,
        None,
        "another agent's lead is not agent2's to hear about"
    );
}

/// Resource updates a 2025-era client receives on its session.
#[derive(Clone)]
struct Updates(mpsc::UnboundedSender<String>);

impl ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

#[tokio::test]
async fn a_stateful_session_subscribes_and_is_notified() {
    let (_intake, bridge) = bridge("sessions = \"stateful\"").await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    dms_bridge::net::install_tls_provider();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(bridge.url.clone())
            .auth_header("agent-token".to_owned()),
    );
    let client = Updates(tx).serve(transport).await.unwrap();
    let info = client.peer().peer_info().unwrap();
    assert_eq!(
        info.capabilities.resources.as_ref().unwrap().subscribe,
        Some(true),
        "a session can be notified, so subscribe is offered"
    );
    client
        .peer()
        .subscribe(SubscribeRequestParams::new(EVENTS))
        .await
        .unwrap();
    let bad = client
        .peer()
        .subscribe(SubscribeRequestParams::new("dms://dealerships/acme"))
        .await;
    assert!(bad.is_err(), "a dealership profile has no events to follow");

    let writer = connect(&bridge.url, Some("agent-token")).await;
    ok(&call(&writer, "leads.create", lead("acme", 2)).await);
    let uri = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("notified within 10 s")
        .unwrap();
    assert_eq!(uri, EVENTS);
}

#[tokio::test]
async fn without_sessions_a_subscription_is_told_on_the_callers_get_stream() {
    let (_intake, bridge) = bridge("").await;
    let agent = connect(&bridge.url, Some("agent-token")).await;
    let info = agent.peer().peer_info().unwrap();
    let resources = info.capabilities.resources.as_ref().unwrap();
    assert_eq!(resources.subscribe, Some(true), "offered without a session");
    let levels = &info.capabilities.experimental.as_ref().unwrap()["automotive_mcp"]["domains"];
    assert_eq!(levels["inventory"]["level"], 3);
    assert_eq!(levels["leads"]["level"], 3);
    assert_eq!(levels["service"]["level"], 2);

    // The stream is opened before subscribing, as VS Code and the TypeScript SDK do.
    let mut stream = common::updates_stream(&bridge.url, Some("agent-token")).await;
    agent
        .peer()
        .subscribe(SubscribeRequestParams::new(EVENTS))
        .await
        .unwrap();
    let elsewhere = agent
        .peer()
        .subscribe(SubscribeRequestParams::new(
            "dms://dealerships/other/events",
        ))
        .await;
    assert!(elsewhere.is_err(), "a dealership the token may not use");
    ok(&call(&agent, "leads.create", lead("acme", 2)).await);
    assert_eq!(common::next_stream_update(&mut stream).await, EVENTS);

    // The subscription is the principal's: a stream opened later (another
    // connection, another replica) is told too, from the subscription on.
    let mut later = common::updates_stream(&bridge.url, Some("agent-token")).await;
    ok(&call(&agent, "leads.create", lead("acme", 3)).await);
    assert_eq!(common::next_stream_update(&mut later).await, EVENTS);

    let anonymous = common::open_updates_stream(&bridge.url, None).await;
    assert_eq!(anonymous.status(), 401);
}

/// `subscriptions/listen` keeps the rules of `events.list` (an outside audit:
/// anonymous callers held streams, the acknowledgement listed dealerships the
/// caller may not use as accepted, and a `*` token could name 15,000).
#[tokio::test]
async fn a_listen_is_bound_to_the_callers_dealerships_a_token_and_a_size() {
    let intake = accepting_intake().await;
    let toml = leads(&intake.uri())
        .edit_dealership("acme", |d| d.set("anonymous_inventory", "true"))
        .dealership(common::config::Dealership::other())
        .render();
    let bridge = common::with_config(&toml).await;
    let agent = modern(&bridge.url, "agent-token").await;

    let elsewhere = "dms://dealerships/other/events";
    let filter = SubscriptionFilter::builder()
        .resource_subscription(EVENTS)
        .resource_subscription(elsewhere)
        .build();
    let listening = agent.peer().listen(filter).await.unwrap();
    let accepted = listening
        .acknowledged()
        .resource_subscriptions
        .clone()
        .unwrap();
    assert_eq!(
        accepted,
        vec![EVENTS.to_owned()],
        "only the caller's dealership"
    );

    let mut many = SubscriptionFilter::builder();
    for n in 0..=256 {
        many = many.resource_subscription(format!("dms://dealerships/acme/leads/ld_{n}"));
    }
    let refused = agent.peer().listen(many.build()).await;
    assert!(refused.is_err(), "257 resources in one listen");

    // No token: events need one, as events.list does.
    let anonymous = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(&bridge.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .body(
            serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                "params": { "notifications": { "resourceSubscriptions": [EVENTS] } } })
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}

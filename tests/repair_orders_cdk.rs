#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Repair orders through a CDK Drive-shaped DMS: the long-operation flow
//! (start, poll as advised, fetch the result), progress notifications, the
//! canonical answer and the failures of an asynchronous query.

use crate::common;

use std::sync::{Arc, Mutex};

use common::config::{BridgeConfig, Dealership, Token, Upstream, quoted};
use common::{call, connect, err, fixture, mount_token, ok, with_config};
use rmcp::handler::client::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, ClientConfig, ProgressNotificationParam, ProgressToken,
    RequestMetaObject,
};
use rmcp::service::NotificationContext;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const DRIVE: &str = "/cdk/drive/servicerepairorder/v1";

fn json_reply(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "application/json")
}

/// The operation answer with `status` and a zero wait, for fast tests.
fn operation(id: &str, status: &str) -> ResponseTemplate {
    let mut body: Value =
        serde_json::from_str(&fixture("cdk/repair-orders/status-received.json")).unwrap();
    body["operationId"] = json!(id);
    body["status"] = json!(status);
    body["checkStatusAfterSeconds"] = json!(0);
    ResponseTemplate::new(200).set_body_json(body)
}

/// A CDK upstream whose open and closed queries each complete after one poll.
async fn drive() -> MockServer {
    let server = MockServer::start().await;
    mount_token(&server).await;
    for (kind, id, result) in [
        ("open", "op-open", "cdk/repair-orders/result-open.json"),
        (
            "closed/delta",
            "op-closed",
            "cdk/repair-orders/result-closed.json",
        ),
    ] {
        Mock::given(method("GET"))
            .and(path(format!("{DRIVE}/{kind}")))
            .respond_with(operation(id, "received"))
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("{DRIVE}/long-operations/{id}/status")))
            .respond_with(operation(id, "complete"))
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("{DRIVE}/long-operations/{id}/result")))
            .respond_with(json_reply(fixture(result)))
            .mount(&server)
            .await;
    }
    server
}

fn config(upstream: &str, profile: &str) -> String {
    let acme = Dealership::new(
        "acme",
        "Acme Motors",
        "America/Chicago",
        ["1 Main St", "Austin", "TX", "78701"],
    );
    BridgeConfig::new()
        .call_timeout("10s")
        .dealership(acme.route("repair_orders", "cdk"))
        .upstream(
            "cdk",
            Upstream::cdk(upstream).set("profile", quoted(profile)),
        )
        .token(Token::new(
            "advisor",
            "advisor-token",
            &["acme"],
            &["amcp:service:read"],
        ))
        .token(Token::new(
            "sales",
            "sales-token",
            &["acme"],
            &["amcp:inventory:read"],
        ))
        .render()
}

/// The built-in CDK profile with a short long-operation bound, as a file.
fn quick_profile(dir: &tempfile::TempDir) -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/adapters/cdk-fortellis.toml"
    ))
    .unwrap()
    .replace(
        "max_wait_seconds = 20",
        "max_wait_seconds = 3\nmin_poll_ms = 100",
    );
    let file = dir.path().join("cdk-quick.toml");
    std::fs::write(&file, text).unwrap();
    file.to_string_lossy().into_owned()
}

const NOV: (&str, &str) = ("2026-11-01", "2026-11-20");

fn list_args(extra: Value) -> Value {
    let mut args = json!({ "dealership_id": "acme", "from": NOV.0, "to": NOV.1, "response_format": "detailed" });
    args.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    args
}

#[tokio::test]
async fn lists_open_and_closed_orders_through_the_long_operation_flow() {
    let server = drive().await;
    let bridge = with_config(&config(&server.uri(), "cdk-fortellis")).await;
    let client = connect(&bridge.url, Some("advisor-token")).await;

    let list = ok(&call(&client, "service.list_repair_orders", list_args(json!({}))).await);
    let numbers: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ro_number"].as_str().unwrap())
        .collect();
    // Newest activity first: closed orders by close time, open ones by open time.
    assert_eq!(
        numbers,
        [
            "60104", "60102", "60101", "60103", "60096", "60095", "60090"
        ]
    );
    assert_eq!(list["total"], 7);
    assert_eq!(list["timezone"], "America/Chicago");

    let ro = |n: &str| {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["ro_number"] == n)
            .unwrap()
            .clone()
    };
    let busy = ro("60102");
    assert_eq!(busy["status"], "in_progress", "work started on a job");
    assert_eq!(busy["repair_order_id"], "HI60102");
    assert_eq!(busy["opened_at"], "2026-11-16T09:05:00-06:00");
    assert_eq!(busy["promised_at"], "2026-11-17T12:00:00-06:00");
    assert!(busy.get("closed_at").is_none());
    assert_eq!(busy["advisor"], "OKAFOR, SAM");
    assert_eq!(busy["customer_initials"], "L. O.");
    assert_eq!(busy["vehicle"]["vin"], "1FTEW1EP56MFA6789");
    assert_eq!(busy["vehicle"]["year"], 2021);
    assert_eq!(
        busy["vehicle"]["mileage_in"],
        json!({ "value": 30550, "unit": "mi" })
    );
    let jobs: Vec<(String, String, String)> = busy["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["op_code"].as_str().unwrap().into(),
                j["status"].as_str().unwrap().into(),
                j["pay_type"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        jobs,
        [
            ("05ROT".into(), "completed".into(), "customer".into()),
            ("13BRK".into(), "in_progress".into(), "customer".into()),
            ("22RCL".into(), "on_hold".into(), "warranty".into()),
        ]
    );
    // Labor 204.95 + parts 212.40 + 8.25 % tax on parts 17.52 = 434.87.
    assert_eq!(
        busy["totals"][0],
        json!({ "pay_type": "customer", "total": { "amount": 43487, "currency": "USD" },
                "labor": { "amount": 20495, "currency": "USD" }, "parts": { "amount": 21240, "currency": "USD" },
                "tax": { "amount": 1752, "currency": "USD" } })
    );
    assert_eq!(busy["totals"][1]["pay_type"], "warranty");
    assert_eq!(ro("60101")["status"], "open");
    let closed = ro("60095");
    assert_eq!(closed["status"], "closed");
    assert_eq!(closed["closed_at"], "2026-11-13T16:30:00-06:00");
    assert_eq!(closed["vehicle"]["mileage_out"]["value"], 30422);

    // No customer contact data reaches the caller.
    let text = list.to_string();
    for pii in [
        "ORTEGA",
        "Ortega",
        "5125550102",
        "luis.ortega",
        "PECAN",
        "ROUND ROCK",
        "78664",
    ] {
        assert!(!text.contains(pii), "{pii} leaked");
    }

    // One start, one poll, one result per query; the closed query asks for the range.
    let requests = server.received_requests().await.unwrap();
    let on = |p: &str| requests.iter().filter(|r| r.url.path() == p).count();
    assert_eq!(on(&format!("{DRIVE}/open")), 1);
    assert_eq!(on(&format!("{DRIVE}/long-operations/op-open/status")), 1);
    assert_eq!(on(&format!("{DRIVE}/long-operations/op-open/result")), 1);
    let closed_start = requests
        .iter()
        .find(|r| r.url.path() == format!("{DRIVE}/closed/delta"))
        .unwrap();
    let query: std::collections::BTreeMap<String, String> = closed_start
        .url
        .query_pairs()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    assert_eq!(
        query,
        [
            ("startDate".into(), NOV.0.into()),
            ("endDate".into(), NOV.1.into())
        ]
        .into()
    );
    assert!(closed_start.headers.get("subscription-id").is_some());
}

#[tokio::test]
async fn filters_by_status_and_vin_and_pages_without_querying_again() {
    let server = drive().await;
    let bridge = with_config(&config(&server.uri(), "cdk-fortellis")).await;
    let client = connect(&bridge.url, Some("advisor-token")).await;

    let closed = ok(&call(
        &client,
        "service.list_repair_orders",
        list_args(json!({ "status": ["closed"] })),
    )
    .await);
    assert_eq!(closed["total"], 3);
    assert_eq!(
        common::count(&server, &format!("{DRIVE}/open")).await,
        0,
        "only the closed query runs"
    );

    let f150 = ok(&call(
        &client,
        "service.list_repair_orders",
        list_args(json!({ "vin": "1ftew1ep56mfa6789" })),
    )
    .await);
    let numbers: Vec<&str> = f150["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ro_number"].as_str().unwrap())
        .collect();
    assert_eq!(numbers, ["60102", "60095"]);

    let first = ok(&call(
        &client,
        "service.list_repair_orders",
        list_args(json!({ "limit": 4 })),
    )
    .await);
    assert_eq!(first["items"].as_array().unwrap().len(), 4);
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = ok(&call(
        &client,
        "service.list_repair_orders",
        list_args(json!({ "limit": 4, "cursor": cursor })),
    )
    .await);
    assert_eq!(second["items"].as_array().unwrap().len(), 3);
    assert!(second.get("next_cursor").is_none());
    // The second page came from the adapter's recent answer, not a new query.
    assert_eq!(
        common::count(&server, &format!("{DRIVE}/open")).await,
        2,
        "the vin list and the first page"
    );
}

#[tokio::test]
async fn gets_one_order_by_number_or_id_and_says_when_there_is_none() {
    let server = drive().await;
    let bridge = with_config(&config(&server.uri(), "cdk-fortellis")).await;
    let client = connect(&bridge.url, Some("advisor-token")).await;

    let open = ok(&call(
        &client,
        "service.get_repair_order",
        json!({ "dealership_id": "acme", "ro_number": "60103" }),
    )
    .await);
    assert_eq!(open["repair_order"]["status"], "in_progress");
    assert_eq!(
        common::count(&server, &format!("{DRIVE}/closed/delta")).await,
        0,
        "found among open orders"
    );

    let closed = ok(&call(
        &client,
        "service.get_repair_order",
        json!({ "dealership_id": "acme", "repair_order_id": "HI60090" }),
    )
    .await);
    assert_eq!(closed["repair_order"]["ro_number"], "60090");
    assert_eq!(
        closed["repair_order"]["totals"][0]["total"]["amount"],
        12000 + 9680 + 799
    );

    let missing = err(&call(
        &client,
        "service.get_repair_order",
        json!({ "dealership_id": "acme", "ro_number": "99999" }),
    )
    .await);
    assert_eq!(missing["code"], "service.repair_order_not_found");
    assert_eq!(missing["retryable"], false);
    assert_eq!(
        missing["recovery"]["next_tool_call"]["name"],
        "service_list_repair_orders"
    );
}

#[tokio::test]
async fn refuses_bad_arguments_before_any_upstream_call() {
    let server = drive().await;
    let bridge = with_config(&config(&server.uri(), "cdk-fortellis")).await;
    let client = connect(&bridge.url, Some("advisor-token")).await;
    let cases = [
        (
            "service.get_repair_order",
            json!({ "dealership_id": "acme" }),
            "",
        ),
        (
            "service.get_repair_order",
            json!({ "dealership_id": "acme", "ro_number": "1", "repair_order_id": "x" }),
            "",
        ),
        (
            "service.get_repair_order",
            json!({ "dealership_id": "acme", "ro_number": "60/../1" }),
            "/ro_number",
        ),
        (
            "service.list_repair_orders",
            json!({ "response_format": "detailed", "dealership_id": "acme", "from": "2026-11-20", "to": "2026-11-01" }),
            "/to",
        ),
        (
            "service.list_repair_orders",
            json!({ "response_format": "detailed", "dealership_id": "acme", "from": "2026-01-01", "to": "2026-11-01" }),
            "/to",
        ),
        (
            "service.list_repair_orders",
            json!({ "response_format": "detailed", "dealership_id": "acme", "from": "2026-02-30" }),
            "/from",
        ),
        (
            "service.list_repair_orders",
            json!({ "response_format": "detailed", "dealership_id": "acme", "vin": "1FTEW1EP56MFA6780" }),
            "/vin",
        ),
        (
            "service.list_repair_orders",
            json!({ "response_format": "detailed", "dealership_id": "acme", "status": ["parked"] }),
            "/status/0",
        ),
    ];
    for (tool, args, pointer) in cases {
        let error = err(&call(&client, tool, args.clone()).await);
        assert_eq!(error["code"], "request.invalid_arguments", "{args}");
        let pointers: Vec<&str> = error["details"]["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pointer"].as_str().unwrap())
            .collect();
        assert!(pointers.contains(&pointer), "{args}: {pointers:?}");
    }
    let sales = connect(&bridge.url, Some("sales-token")).await;
    let forbidden = err(&call(
        &sales,
        "service.list_repair_orders",
        json!({ "response_format": "detailed", "dealership_id": "acme" }),
    )
    .await);
    assert_eq!(forbidden["code"], "auth.forbidden");
    let sent = server.received_requests().await.unwrap();
    assert!(
        sent.is_empty(),
        "nothing reached the DMS: {:?}",
        sent.iter()
            .map(|r| r.url.path().to_owned())
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_failed_a_stuck_and_a_malformed_operation_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let profile = quick_profile(&dir);

    // The DMS reports the operation failed.
    let failed = MockServer::start().await;
    mount_token(&failed).await;
    Mock::given(path(format!("{DRIVE}/open")))
        .respond_with(operation("op-1", "received"))
        .mount(&failed)
        .await;
    Mock::given(path(format!("{DRIVE}/long-operations/op-1/status")))
        .respond_with(operation("op-1", "error"))
        .mount(&failed)
        .await;
    // The operation never completes.
    let stuck = MockServer::start().await;
    mount_token(&stuck).await;
    Mock::given(path(format!("{DRIVE}/open")))
        .respond_with(operation("op-2", "received"))
        .mount(&stuck)
        .await;
    Mock::given(path(format!("{DRIVE}/long-operations/op-2/status")))
        .respond_with(operation("op-2", "received"))
        .mount(&stuck)
        .await;
    // An operation id that would walk out of the API's path.
    let odd = MockServer::start().await;
    mount_token(&odd).await;
    Mock::given(path(format!("{DRIVE}/open")))
        .respond_with(operation("../../admin", "received"))
        .mount(&odd)
        .await;

    for (server, code, retryable) in [
        (&failed, "upstream.unavailable", true),
        (&stuck, "upstream.timeout", true),
        (&odd, "upstream.invalid_response", false),
    ] {
        let bridge = with_config(&config(&server.uri(), &profile)).await;
        let client = connect(&bridge.url, Some("advisor-token")).await;
        let args = list_args(json!({ "status": ["open"] }));
        let error = err(&call(&client, "service.list_repair_orders", args).await);
        assert_eq!(error["code"], code);
        assert_eq!(error["retryable"], retryable, "{code}");
        assert!(
            !error.to_string().contains("op-"),
            "no vendor detail: {error}"
        );
    }
    // How often it polls is the floor's to bound (at most one per 100 ms in
    // the 3 s); how many polls fit depends on the machine.
    let polls = common::count(&stuck, &format!("{DRIVE}/long-operations/op-2/status")).await;
    assert!(
        (1..=32).contains(&polls),
        "polled within the 3 s bound at the 100 ms floor: {polls}"
    );
    assert_eq!(
        odd.received_requests()
            .await
            .unwrap()
            .iter()
            .filter(|r| r.url.path().contains("admin"))
            .count(),
        0
    );
}

/// A client that records the progress notifications it receives.
#[derive(Clone, Default)]
struct ProgressRecorder(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for ProgressRecorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }
}

#[tokio::test]
async fn reports_progress_while_the_dms_prepares_the_data() {
    let server = MockServer::start().await;
    mount_token(&server).await;
    Mock::given(path(format!("{DRIVE}/open")))
        .respond_with(operation("op-p", "received"))
        .mount(&server)
        .await;
    // Two "not yet" answers, then done.
    Mock::given(path(format!("{DRIVE}/long-operations/op-p/status")))
        .respond_with(operation("op-p", "received"))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(path(format!("{DRIVE}/long-operations/op-p/status")))
        .respond_with(operation("op-p", "complete"))
        .mount(&server)
        .await;
    Mock::given(path(format!("{DRIVE}/long-operations/op-p/result")))
        .respond_with(json_reply(fixture("cdk/repair-orders/result-open.json")))
        .mount(&server)
        .await;
    let bridge = with_config(&config(&server.uri(), "cdk-fortellis")).await;

    let recorder = ProgressRecorder::default();
    dms_bridge::net::install_tls_provider();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            bridge.url.clone(),
        )
        .auth_header("advisor-token".to_owned()),
    );
    let client = recorder.clone().serve(transport).await.unwrap();
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(rmcp::model::NumberOrString::String(
        "ro-1".into(),
    )));
    let mut params = CallToolRequestParams::new("service.get_repair_order").with_arguments(
        json!({ "dealership_id": "acme", "ro_number": "60101" })
            .as_object()
            .unwrap()
            .clone(),
    );
    params.meta = Some(meta);
    let result = client.call_tool(params).await.unwrap();
    assert_ne!(result.is_error, Some(true));

    // Notifications travel on the call's stream; wait (bounded) for the last.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while recorder.0.lock().unwrap().len() < 3 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = recorder.0.lock().unwrap().clone();
    assert!(
        seen.len() >= 3,
        "a report per wait and one for the result: {seen:?}"
    );
    // (rmcp's client puts its own token on the request; every report carries the same one.)
    assert!(
        seen.iter()
            .all(|p| p.progress_token == seen[0].progress_token),
        "{seen:?}"
    );
    let progress: Vec<f64> = seen.iter().map(|p| p.progress).collect();
    assert!(
        progress.windows(2).all(|w| w[0] <= w[1]),
        "never goes back: {progress:?}"
    );
    assert!(
        seen.iter()
            .all(|p| p.message.as_deref().is_some_and(|m| !m.contains("op-p")))
    );

    // Without a progress token, no notification is sent.
    let quiet = ProgressRecorder::default();
    dms_bridge::net::install_tls_provider();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            bridge.url.clone(),
        )
        .auth_header("advisor-token".to_owned()),
    );
    let client = quiet.clone().serve(transport).await.unwrap();
    let params = CallToolRequestParams::new("service.get_repair_order").with_arguments(
        json!({ "dealership_id": "acme", "ro_number": "60102" })
            .as_object()
            .unwrap()
            .clone(),
    );
    client.call_tool(params).await.unwrap();
    assert!(quiet.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_demo_answers_repair_orders_from_its_cdk_drive_mock() {
    let bridge = common::demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let list = ok(&call(
        &client,
        "service.list_repair_orders",
        json!({ "response_format": "detailed", "dealership_id": "demo-cdk" }),
    )
    .await);
    // The mock moves the fixture's dates so its orders are recent: all eight fall in the last 30 days.
    assert_eq!(list["total"], 8, "{list}");
    let statuses: std::collections::BTreeSet<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["closed", "in_progress", "open"].into());
}

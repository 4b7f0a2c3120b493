#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `soap` adapter kind with the built-in `opentrack` profile against a
//! wiremock OpenTrack-shaped service serving the recorded-style fixtures,
//! through the real MCP client: one `GetClosedRepairOrders` call per close
//! day, lookups by number, faults, unreadable answers, the exact envelopes
//! sent, and a STAR-style in-band status written as a profile in this file.

use crate::common;

use std::collections::BTreeSet;

use common::config::{BridgeConfig, Dealership, Token, Upstream, secret};
use common::*;
use dms_bridge::adapters::soap::xml::to_json;
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const ENDPOINT: &str = "/serviceapi.asmx";
const CLOSED_ACTION: &str = "\"opentrack.dealertrack.com/GetClosedRepairOrders\"";
const DETAILS_ACTION: &str = "\"opentrack.dealertrack.com/GetClosedRepairOrderDetails\"";
const TOKEN: &str = "acme-token";

/// A dealership on Central time whose repair orders come from `upstream`.
fn config(upstream: Upstream) -> String {
    BridgeConfig::new()
        .call_timeout("5s")
        .no_cache()
        .dealership(Dealership::acme().route("repair_orders", "ot"))
        .upstream("ot", upstream)
        .token(Token::new("acme", TOKEN, &["acme"], &["amcp:service:read"]))
        .render()
}

fn xml_reply(status: u16, body: String) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body, "text/xml; charset=utf-8")
}

/// OpenTrack serving the closed-order fixtures per close day and details per
/// number; any other day or number gets the empty answer.
async fn opentrack_server() -> MockServer {
    let server = MockServer::start().await;
    for day in ["2026-10-21", "2026-11-05", "2026-11-13", "2026-11-14"] {
        let file = format!(
            "opentrack/closed-repair-orders-{}.xml",
            day.replace('-', "")
        );
        Mock::given(method("POST"))
            .and(path(ENDPOINT))
            .and(body_string_contains(format!(
                "<CloseDate>{day}</CloseDate>"
            )))
            .respond_with(xml_reply(200, fixture(&file)))
            .with_priority(1)
            .mount(&server)
            .await;
    }
    for number in ["60080", "60090", "60095", "60096"] {
        let file = format!("opentrack/repair-order-details-{number}.xml");
        Mock::given(method("POST"))
            .and(path(ENDPOINT))
            .and(body_string_contains(format!(
                "<RepairOrderNumber>{number}</RepairOrderNumber>"
            )))
            .respond_with(xml_reply(200, fixture(&file)))
            .with_priority(1)
            .mount(&server)
            .await;
    }
    let none = |file: &str| xml_reply(200, fixture(file));
    Mock::given(method("POST"))
        .and(body_string_contains("<CloseDate>"))
        .respond_with(none("opentrack/closed-repair-orders-none.xml"))
        .with_priority(5)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("<RepairOrderNumber>"))
        .respond_with(none("opentrack/repair-order-details-none.xml"))
        .with_priority(5)
        .mount(&server)
        .await;
    server
}

/// A bridge on `server` with the opentrack profile, and a connected client.
async fn bridge(server: &MockServer) -> (Bridge, Client) {
    let bridge = with_config(&config(Upstream::opentrack(&server.uri()))).await;
    let client = connect(&bridge.url, Some(TOKEN)).await;
    (bridge, client)
}

/// An upstream that answers every call with `reply`.
async fn answering(reply: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply)
        .mount(&server)
        .await;
    server
}

fn header<'a>(request: &'a Request, name: &str) -> &'a str {
    request
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

fn text(value: &Value) -> &str {
    value
        .as_str()
        .or_else(|| value["#text"].as_str())
        .unwrap_or_default()
}

fn list_args(from: &str, to: &str) -> Value {
    json!({ "dealership_id": "acme", "response_format": "detailed", "from": from, "to": to })
}

fn total_for<'a>(order: &'a Value, pay_type: &str) -> &'a Value {
    order["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["pay_type"] == pay_type)
        .unwrap_or_else(|| panic!("no {pay_type} total in {order}"))
}

#[tokio::test]
async fn lists_closed_orders_with_one_soap_call_per_day() {
    let server = opentrack_server().await;
    let (_bridge, client) = bridge(&server).await;
    let answer = ok(&call(
        &client,
        "service.list_repair_orders",
        list_args("2026-11-12", "2026-11-14"),
    )
    .await);

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 3, "one call per day");
    let mut days = BTreeSet::new();
    for request in &requests {
        assert_eq!(request.method.as_str(), "POST");
        assert_eq!(request.url.path(), ENDPOINT);
        assert_eq!(header(request, "soapaction"), CLOSED_ACTION);
        assert_eq!(header(request, "content-type"), "text/xml; charset=utf-8");
        let doc = to_json(&request.body).unwrap();
        let envelope = &doc["Envelope"];
        let token = &envelope["Header"]["Security"]["UsernameToken"];
        assert_eq!(text(&token["Username"]), "ot-user");
        assert_eq!(text(&token["Password"]), "s3cret&<pw>");
        let op = &envelope["Body"]["GetClosedRepairOrders"];
        assert_eq!(text(&op["dealer"]["EnterpriseCode"]), "EC1");
        assert_eq!(text(&op["dealer"]["CompanyNumber"]), "CN&7");
        days.insert(text(&op["request"]["CloseDate"]).to_owned());
    }
    assert_eq!(
        days,
        BTreeSet::from(["2026-11-12", "2026-11-13", "2026-11-14"].map(String::from))
    );

    assert_eq!(answer["total"], 2);
    assert_eq!(answer["timezone"], "America/Chicago");
    let items = answer["items"].as_array().unwrap();
    let numbers: Vec<&str> = items
        .iter()
        .map(|o| o["ro_number"].as_str().unwrap())
        .collect();
    assert_eq!(numbers, ["60096", "60095"], "newest activity first");
    let ro = &items[1];
    assert_eq!(ro["status"], "closed");
    assert_eq!(ro["opened_at"], "2026-11-12T10:00:00-06:00");
    assert_eq!(ro["promised_at"], "2026-11-13T17:00:00-06:00");
    assert_eq!(ro["closed_at"], "2026-11-13T16:30:00-06:00");
    assert_eq!(ro["advisor"], "Pat Moreno");
    assert_eq!(ro["vehicle"]["vin"], "1FTEW1EP56MFA6789");
    assert_eq!(ro["vehicle"]["year"], 2021);
    assert_eq!(ro["customer_initials"], "L. O.");
    let ops: Vec<&str> = ro["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["op_code"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["01LOF", "22RCL"]);
    // Customer: labor 39.95 + parts 12.50 + tax 1.03; warranty: the recall's 0.00 labor.
    let customer = total_for(ro, "customer");
    assert_eq!(
        customer["total"],
        json!({ "amount": 5348, "currency": "USD" })
    );
    assert_eq!(customer["labor"]["amount"], 3995);
    assert_eq!(customer["parts"]["amount"], 1250);
    assert_eq!(customer["tax"]["amount"], 103);
    assert_eq!(total_for(ro, "warranty")["total"]["amount"], 0);
    assert_eq!(
        total_for(&items[0], "customer")["total"]["amount"],
        2495 + 3800 + 314
    );

    let text = answer.to_string();
    for private in [
        "ORTEGA",
        "LUIS",
        "FISCHER",
        "NOAH",
        "CK0102",
        "CustomerName",
    ] {
        assert!(!text.contains(private), "{private} leaked: {text}");
    }
}

#[tokio::test]
async fn paging_reuses_each_days_answer() {
    let server = opentrack_server().await;
    let (_bridge, client) = bridge(&server).await;
    let mut args = list_args("2026-11-12", "2026-11-14");
    args["limit"] = json!(1);
    let first = ok(&call(&client, "service.list_repair_orders", args.clone()).await);
    assert_eq!(first["items"][0]["ro_number"], "60096");
    args["cursor"] = first["next_cursor"].clone();
    let second = ok(&call(&client, "service.list_repair_orders", args).await);
    assert_eq!(second["items"][0]["ro_number"], "60095");
    assert!(second.get("next_cursor").is_none());
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn open_orders_only_are_not_offered_by_opentrack() {
    let server = opentrack_server().await;
    let (_bridge, client) = bridge(&server).await;
    let mut args = list_args("2026-11-12", "2026-11-14");
    args["status"] = json!(["open", "in_progress"]);
    let error = err(&call(&client, "service.list_repair_orders", args).await);
    assert_eq!(error["code"], "capability.unsupported");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn gets_one_order_by_number_or_id() {
    let server = opentrack_server().await;
    let (_bridge, client) = bridge(&server).await;
    let by_number = json!({ "dealership_id": "acme", "ro_number": "60090" });
    let answer = ok(&call(&client, "service.get_repair_order", by_number).await);
    let ro = &answer["repair_order"];
    assert_eq!(ro["ro_number"], "60090");
    assert_eq!(ro["closed_at"], "2026-11-05T14:10:00-06:00");
    assert_eq!(ro["customer_initials"], "A. L.");
    assert_eq!(
        total_for(ro, "customer")["total"]["amount"],
        12000 + 9680 + 799
    );

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(header(&requests[0], "soapaction"), DETAILS_ACTION);
    let doc = to_json(&requests[0].body).unwrap();
    let op = &doc["Envelope"]["Body"]["GetClosedRepairOrderDetails"];
    assert_eq!(text(&op["request"]["RepairOrderNumber"]), "60090");
    assert_eq!(text(&op["dealer"]["EnterpriseCode"]), "EC1");

    // OpenTrack has no key besides the number.
    let by_id = json!({ "dealership_id": "acme", "repair_order_id": "60096" });
    let answer = ok(&call(&client, "service.get_repair_order", by_id).await);
    assert_eq!(answer["repair_order"]["ro_number"], "60096");
}

#[tokio::test]
async fn an_unknown_number_is_not_found() {
    let server = opentrack_server().await;
    let (_bridge, client) = bridge(&server).await;
    let args = json!({ "dealership_id": "acme", "ro_number": "99999" });
    let error = err(&call(&client, "service.get_repair_order", args).await);
    assert_eq!(error["code"], "service.repair_order_not_found");
}

/// The error a list call gets when the upstream answers every call with `reply`.
async fn list_error(reply: ResponseTemplate) -> (Value, usize) {
    let server = answering(reply).await;
    let (_bridge, client) = bridge(&server).await;
    let error = err(&call(
        &client,
        "service.list_repair_orders",
        list_args("2026-11-13", "2026-11-13"),
    )
    .await);
    (error, server.received_requests().await.unwrap().len())
}

#[tokio::test]
async fn faults_for_credentials_and_dealer_codes_are_not_retryable() {
    for file in ["fault-authentication.xml", "fault-dealer.xml"] {
        let (error, calls) =
            list_error(xml_reply(500, fixture(&format!("opentrack/{file}")))).await;
        // The error mapper reports refused credentials as upstream.rejected.
        assert_eq!(error["code"], "upstream.rejected", "{file}");
        assert_eq!(error["retryable"], false, "{file}");
        assert_eq!(calls, 1, "{file}: not retried");
        let text = error.to_string();
        assert!(
            !text.contains("security token") && !text.contains("EnterpriseCode"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn answers_that_are_not_readable_xml_are_invalid() {
    let doctype = concat!(
        r#"<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY lol "lol">]>"#,
        r#"<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body/></soap:Envelope>"#
    );
    for body in [
        "this is not XML <<<",
        doctype,
        "<html><body>Welcome</body></html>",
    ] {
        let (error, _) = list_error(xml_reply(200, body.to_owned())).await;
        assert_eq!(error["code"], "upstream.invalid_response", "{body}");
    }
}

#[tokio::test]
async fn http_500_without_a_fault_is_unavailable_and_retryable() {
    let (error, calls) = list_error(ResponseTemplate::new(500).set_body_string("boom")).await;
    assert_eq!(error["code"], "upstream.unavailable");
    assert_eq!(error["retryable"], true);
    assert_eq!(calls, 3, "the first attempt and two retries");
}

// --- The exact requests, as snapshots ---

async fn first_request_body(tool: &str, args: Value) -> String {
    let server = opentrack_server().await;
    let (_bridge, client) = bridge(&server).await;
    ok(&call(&client, tool, args).await);
    let requests = server.received_requests().await.unwrap();
    String::from_utf8(requests[0].body.clone()).unwrap()
}

#[tokio::test]
async fn closed_day_request_envelope() {
    let body = first_request_body(
        "service.list_repair_orders",
        list_args("2026-11-13", "2026-11-13"),
    )
    .await;
    insta::assert_snapshot!("opentrack_get_closed_repair_orders", body);
}

#[tokio::test]
async fn details_request_envelope() {
    let args = json!({ "dealership_id": "acme", "ro_number": "60095" });
    let body = first_request_body("service.get_repair_order", args).await;
    insta::assert_snapshot!("opentrack_get_closed_repair_order_details", body);
}

// --- STAR is a profile, not Rust ---

/// A Reynolds RCI-like profile: SOAP 1.1, a `SOAPAction` header by default, a
/// STAR `TransStatus` inside HTTP 200 that must be `0`.
const STAR_PROFILE: &str = r#"
name = "star-like"
domains = ["repair_orders"]
version = "soap11"
security = "username_token"

[repair_orders]
mapping = "opentrack-repair-orders"

[repair_orders.all]
path = "/rci"
action = "urn:example:ProcessMessage"
body = "<ProcessMessage><From>{from}</From><To>{to}</To><Dealer>{vars.dealer}</Dealer></ProcessMessage>"
records = "/Envelope/Body/ProcessMessageResponse/payload/content/RepairOrderResp/RepairOrder"
status = { path = "/Envelope/Body/ProcessMessageResponse/payload/content/RepairOrderResp/TransStatus/StatusCode", success = "0" }

[errors.codes]
"503" = "unavailable"
"#;

fn star_answer(code: &str) -> String {
    format!(
        r#"<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ProcessMessageResponse><payload><content><RepairOrderResp>
<TransStatus><StatusCode>{code}</StatusCode><Status>x</Status></TransStatus>
<RepairOrder><RepairOrderNumber>R1</RepairOrderNumber><CloseDate>202611131200</CloseDate><CustomerName>DOE, JANE</CustomerName></RepairOrder>
</RepairOrderResp></content></payload></ProcessMessageResponse></S:Body></S:Envelope>"#
    )
}

async fn star_call(code: &str) -> (rmcp::model::CallToolResult, Vec<Request>) {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("star-like.toml");
    std::fs::write(&profile, STAR_PROFILE).unwrap();
    let server = answering(xml_reply(200, star_answer(code))).await;
    let upstream = Upstream::soap(&profile.display().to_string(), &server.uri())
        .set("username", secret("u"))
        .set("password", secret("p"))
        .set("vars", r#"{ dealer = "D1" }"#)
        .resilience("{ retries = { max = 0 } }");
    let bridge = with_config(&config(upstream)).await;
    let client = connect(&bridge.url, Some(TOKEN)).await;
    let mut args = list_args("2026-11-10", "2026-11-14");
    args["status"] = json!(["closed"]);
    let result = call(&client, "service.list_repair_orders", args).await;
    (result, server.received_requests().await.unwrap())
}

#[tokio::test]
async fn a_star_status_is_checked_by_the_profile() {
    let (result, requests) = star_call("0").await;
    let answer = ok(&result);
    assert_eq!(answer["items"][0]["ro_number"], "R1");
    assert_eq!(answer["items"][0]["customer_initials"], "J. D.");
    assert_eq!(requests.len(), 1, "one call for the range");
    let request = &requests[0];
    assert_eq!(request.url.path(), "/rci");
    assert_eq!(
        header(request, "soapaction"),
        "\"urn:example:ProcessMessage\""
    );
    assert_eq!(header(request, "content-type"), "text/xml; charset=utf-8");
    let doc = to_json(&request.body).unwrap();
    let message = &doc["Envelope"]["Body"]["ProcessMessage"];
    assert_eq!(
        (
            text(&message["From"]),
            text(&message["To"]),
            text(&message["Dealer"])
        ),
        ("2026-11-10", "2026-11-14", "D1")
    );
    let raw = String::from_utf8(request.body.clone()).unwrap();
    assert!(raw.contains(r#"xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/""#));

    let (result, _) = star_call("17").await;
    let error = err(&result);
    assert_eq!(error["code"], "upstream.rejected");
    assert_eq!(error["retryable"], false);
    let (result, _) = star_call("503").await;
    assert_eq!(err(&result)["code"], "upstream.unavailable");
}

// --- The demo ---

#[tokio::test]
async fn the_demo_serves_demo_feeds_repair_orders_from_its_opentrack_mock() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let args = json!({ "dealership_id": "demo-feed", "response_format": "detailed", "from": "2026-10-21", "to": "2026-11-14" });
    let answer = ok(&call(&client, "service.list_repair_orders", args).await);
    assert_eq!(answer["total"], 4);
    assert_eq!(answer["timezone"], "America/Denver");
    let get = json!({ "dealership_id": "demo-feed", "ro_number": "60080" });
    let answer = ok(&call(&client, "service.get_repair_order", get).await);
    assert_eq!(answer["repair_order"]["customer_initials"], "D. W.");
    let unknown = json!({ "dealership_id": "demo-feed", "ro_number": "1" });
    let error = err(&call(&client, "service.get_repair_order", unknown).await);
    assert_eq!(error["code"], "service.repair_order_not_found");
}

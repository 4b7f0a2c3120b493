//! A Dealertrack OpenTrack-shaped SOAP service for the demo (demo-feed's
//! repair orders): `POST /serviceapi.asmx` with a SOAP 1.2 envelope sent as
//! `text/xml`, the operation in `SOAPAction`, a WS-Security UsernameToken and
//! the dealer codes in the request. Answers come from
//! `wiremock-fixtures/opentrack/`: the closed orders of the close days the
//! fixtures hold (other days are empty), details by RO number (unknown numbers
//! are an empty result), and SOAP faults for bad credentials or dealer codes.

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use serde_json::Value;

use crate::adapters::soap::{envelope, xml};

pub const USERNAME: &str = "demo-opentrack-user";
pub const PASSWORD: &str = "demo-opentrack-pass";
pub const ENTERPRISE_CODE: &str = "LK";
pub const COMPANY_NUMBER: &str = "LK1";
const ACTION_PREFIX: &str = "opentrack.dealertrack.com/";

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../wiremock-fixtures/opentrack/", $name))
    };
}

/// `GetClosedRepairOrders` answers by close day.
const CLOSED: [(&str, &str); 4] = [
    ("2026-10-21", fixture!("closed-repair-orders-20261021.xml")),
    ("2026-11-05", fixture!("closed-repair-orders-20261105.xml")),
    ("2026-11-13", fixture!("closed-repair-orders-20261113.xml")),
    ("2026-11-14", fixture!("closed-repair-orders-20261114.xml")),
];
/// `GetClosedRepairOrderDetails` answers by RO number.
const DETAILS: [(&str, &str); 4] = [
    ("60080", fixture!("repair-order-details-60080.xml")),
    ("60090", fixture!("repair-order-details-60090.xml")),
    ("60095", fixture!("repair-order-details-60095.xml")),
    ("60096", fixture!("repair-order-details-60096.xml")),
];
const CLOSED_NONE: &str = fixture!("closed-repair-orders-none.xml");
const DETAILS_NONE: &str = fixture!("repair-order-details-none.xml");
const FAULT_AUTHENTICATION: &str = fixture!("fault-authentication.xml");
const FAULT_DEALER: &str = fixture!("fault-dealer.xml");

pub fn router() -> Router {
    Router::new().route("/serviceapi.asmx", post(serve))
}

async fn serve(headers: HeaderMap, body: Bytes) -> Response {
    let header = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    if !header(header::CONTENT_TYPE).starts_with("text/xml") {
        return StatusCode::UNSUPPORTED_MEDIA_TYPE.into_response();
    }
    let action = header(header::HeaderName::from_static("soapaction"));
    let Some(operation) = action.trim_matches('"').strip_prefix(ACTION_PREFIX) else {
        return (StatusCode::BAD_REQUEST, "unknown SOAPAction").into_response();
    };
    let Ok(doc) = xml::to_json(&body) else {
        return (StatusCode::BAD_REQUEST, "not XML").into_response();
    };
    let token = &doc["Envelope"]["Header"]["Security"]["UsernameToken"];
    if text(&token["Username"]) != USERNAME || text(&token["Password"]) != PASSWORD {
        return soap(StatusCode::INTERNAL_SERVER_ERROR, FAULT_AUTHENTICATION);
    }
    let request = envelope::body(&doc)
        .map(|b| &b[operation])
        .unwrap_or(&Value::Null);
    let dealer = &request["dealer"];
    if text(&dealer["EnterpriseCode"]) != ENTERPRISE_CODE
        || text(&dealer["CompanyNumber"]) != COMPANY_NUMBER
    {
        return soap(StatusCode::INTERNAL_SERVER_ERROR, FAULT_DEALER);
    }
    let asked = |key: &str| text(&request["request"][key]);
    let answer = match operation {
        "GetClosedRepairOrders" => lookup(&CLOSED, asked("CloseDate")).unwrap_or(CLOSED_NONE),
        "GetClosedRepairOrderDetails" => {
            lookup(&DETAILS, asked("RepairOrderNumber")).unwrap_or(DETAILS_NONE)
        }
        _ => return (StatusCode::BAD_REQUEST, "unknown operation").into_response(),
    };
    soap(StatusCode::OK, answer)
}

fn lookup(table: &[(&str, &'static str)], key: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// An element's text, whether it has attributes (`Password Type=…`) or not.
fn text(value: &Value) -> &str {
    value
        .as_str()
        .or_else(|| value["#text"].as_str())
        .unwrap_or_default()
}

fn soap(status: StatusCode, body: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, envelope::TEXT_XML_UTF8)],
        body,
    )
        .into_response()
}

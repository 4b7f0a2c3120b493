//! A Dealertrack OpenTrack-shaped SOAP service for the demo (demo-feed's
//! repair orders, and a vehicle inventory): `POST /serviceapi.asmx` and
//! `POST /vehicleapi.asmx` with a SOAP 1.2 envelope sent as `text/xml`, the
//! operation in `SOAPAction`, a WS-Security UsernameToken and the dealer codes
//! in the request (`<dealer>` for the repair-order operations, `<Dealer>` for
//! the vehicle ones). Answers come from `wiremock-fixtures/opentrack/`: the
//! closed orders of the close days the fixtures hold (other days are empty),
//! details by RO number (unknown numbers are an empty result), the whole
//! vehicle inventory in one answer, and SOAP faults for bad credentials or
//! dealer codes.
//! Requests are read with this crate's own XML reader ([`crate::xml`]), not the
//! bridge's, so an envelope the bridge builds wrong is not read back the way it
//! was meant.

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;

use crate::xml;

pub const USERNAME: &str = "demo-opentrack-user";
pub const PASSWORD: &str = "demo-opentrack-pass";
pub const ENTERPRISE_CODE: &str = "LK";
pub const COMPANY_NUMBER: &str = "LK1";
const ACTION_PREFIX: &str = "opentrack.dealertrack.com/";
/// What OpenTrack answers with, SOAP 1.2 envelope or not.
const TEXT_XML_UTF8: &str = "text/xml; charset=utf-8";

/// `GetClosedRepairOrders` answers by close day.
const CLOSED: [(&str, &str); 4] = [
    (
        "2026-10-21",
        fixture!("opentrack/closed-repair-orders-20261021.xml"),
    ),
    (
        "2026-11-05",
        fixture!("opentrack/closed-repair-orders-20261105.xml"),
    ),
    (
        "2026-11-13",
        fixture!("opentrack/closed-repair-orders-20261113.xml"),
    ),
    (
        "2026-11-14",
        fixture!("opentrack/closed-repair-orders-20261114.xml"),
    ),
];
/// `GetClosedRepairOrderDetails` answers by RO number.
const DETAILS: [(&str, &str); 4] = [
    (
        "60080",
        fixture!("opentrack/repair-order-details-60080.xml"),
    ),
    (
        "60090",
        fixture!("opentrack/repair-order-details-60090.xml"),
    ),
    (
        "60095",
        fixture!("opentrack/repair-order-details-60095.xml"),
    ),
    (
        "60096",
        fixture!("opentrack/repair-order-details-60096.xml"),
    ),
];
/// `VehicleInventory`: every unit, in one answer.
const VEHICLE_INVENTORY: &str = fixture!("opentrack/vehicle-inventory.xml");
const CLOSED_NONE: &str = fixture!("opentrack/closed-repair-orders-none.xml");
const DETAILS_NONE: &str = fixture!("opentrack/repair-order-details-none.xml");
const FAULT_AUTHENTICATION: &str = fixture!("opentrack/fault-authentication.xml");
const FAULT_DEALER: &str = fixture!("opentrack/fault-dealer.xml");

pub fn router() -> Router {
    Router::new()
        .route("/serviceapi.asmx", post(service_api))
        .route("/vehicleapi.asmx", post(vehicle_api))
}

/// The OpenTrack web services the mock answers.
#[derive(Clone, Copy)]
enum Api {
    Service,
    Vehicle,
}

async fn service_api(headers: HeaderMap, body: Bytes) -> Response {
    serve(Api::Service, &headers, &body)
}

async fn vehicle_api(headers: HeaderMap, body: Bytes) -> Response {
    serve(Api::Vehicle, &headers, &body)
}

fn serve(api: Api, headers: &HeaderMap, body: &[u8]) -> Response {
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
    let Some(doc) = xml::parse(body) else {
        return (StatusCode::BAD_REQUEST, "not XML").into_response();
    };
    let token = xml::descend(
        doc.root(),
        &["Envelope", "Header", "Security", "UsernameToken"],
    );
    if xml::text_at(token, &["Username"]) != USERNAME
        || xml::text_at(token, &["Password"]) != PASSWORD
    {
        return soap(StatusCode::INTERNAL_SERVER_ERROR, FAULT_AUTHENTICATION);
    }
    let request = xml::descend(doc.root(), &["Envelope", "Body", operation]);
    let read = |path: &[&str]| xml::text_at(request, path);
    // The repair-order operations spell the element `dealer`, the others `Dealer`.
    let dealer = match api {
        Api::Service => "dealer",
        Api::Vehicle => "Dealer",
    };
    if read(&[dealer, "EnterpriseCode"]) != ENTERPRISE_CODE
        || read(&[dealer, "CompanyNumber"]) != COMPANY_NUMBER
    {
        return soap(StatusCode::INTERNAL_SERVER_ERROR, FAULT_DEALER);
    }
    let asked = |key| read(&["request", key]);
    let answer = match (api, operation) {
        (Api::Service, "GetClosedRepairOrders") => {
            lookup(&CLOSED, &asked("CloseDate")).unwrap_or(CLOSED_NONE)
        }
        (Api::Service, "GetClosedRepairOrderDetails") => {
            lookup(&DETAILS, &asked("RepairOrderNumber")).unwrap_or(DETAILS_NONE)
        }
        (Api::Vehicle, "VehicleInventory") => VEHICLE_INVENTORY,
        _ => return (StatusCode::BAD_REQUEST, "unknown operation").into_response(),
    };
    soap(StatusCode::OK, answer)
}

fn lookup(table: &[(&str, &'static str)], key: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn soap(status: StatusCode, body: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, TEXT_XML_UTF8)], body).into_response()
}

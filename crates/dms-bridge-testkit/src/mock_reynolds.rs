//! A Reynolds & Reynolds RCI-shaped SOAP service for the demo: `POST
//! /Sync/RCI/DmsBridge/Receive.ashx` with a SOAP 1.1 envelope sent as
//! `text/xml`, the STAR transport's `ProcessMessage` action in `SOAPAction`, a
//! WS-Security UsernameToken, and a Reynolds BOD (`rey_DmsBridge…`, namespace
//! `http://www.starstandards.org/STAR`) in `ProcessMessage/payload/content`
//! naming the dealer by DealerNumber / StoreNumber / AreaNumber. The BOD
//! decides the answer, from `wiremock-fixtures/reynolds/`: the whole vehicle
//! inventory, the orders finally posted on one day (the fixtures hold
//! 2026-11-12, 2026-11-13 and 2026-11-16; other days are empty), the open
//! orders, or one order by RO number (unknown numbers are an empty result).
//! Fixture dates are fixed, not moved to today. Bad credentials are a SOAP
//! fault; an unknown dealer is a `TransStatus` error inside HTTP 200, as RCI
//! answers. Requests are read with this crate's own XML reader
//! ([`crate::xml`]), not the bridge's.

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use roxmltree::Node;

use crate::xml;

pub const USERNAME: &str = "demo-reynolds-user";
pub const PASSWORD: &str = "demo-reynolds-pass";
pub const DEALER_NUMBER: &str = "DEMO01";
pub const STORE_NUMBER: &str = "01";
pub const AREA_NUMBER: &str = "01";
/// The partner's RCI URL below the mock's address: the instance's `base_url`
/// is the mock's address plus everything before `/Receive.ashx`.
pub const PATH: &str = "/Sync/RCI/DmsBridge/Receive.ashx";
/// The STAR transport's one operation; the BOD says what is asked.
const ACTION: &str =
    "http://www.starstandards.org/webservices/2005/10/transport/operations/ProcessMessage";
const SOAP11_NAMESPACE: &str = "http://schemas.xmlsoap.org/soap/envelope/";
const STAR_NAMESPACE: &str = "http://www.starstandards.org/STAR";
const GET_INVENTORY: &str = "rey_DmsBridgeGetVehicleInventory";
const GET_REPAIR_ORDER: &str = "rey_DmsBridgeGetRepairOrder";
const TEXT_XML_UTF8: &str = "text/xml; charset=utf-8";

const INVENTORY: &str = fixture!("reynolds/vehicle-inventory.xml");
/// Closed orders by final posting day (`YYYY-MM-DD`, as the request asks).
const CLOSED: [(&str, &str); 3] = [
    (
        "2026-11-12",
        fixture!("reynolds/repair-orders-closed-20261112.xml"),
    ),
    (
        "2026-11-13",
        fixture!("reynolds/repair-orders-closed-20261113.xml"),
    ),
    (
        "2026-11-16",
        fixture!("reynolds/repair-orders-closed-20261116.xml"),
    ),
];
const OPEN: &str = fixture!("reynolds/repair-orders-open.xml");
/// Single orders by RO number.
const LOOKUP: [(&str, &str); 2] = [
    ("610212", fixture!("reynolds/repair-order-610212.xml")),
    ("610220", fixture!("reynolds/repair-order-610220.xml")),
];
const NONE: &str = fixture!("reynolds/repair-orders-none.xml");
const FAULT_AUTHENTICATION: &str = fixture!("reynolds/fault-authentication.xml");
/// Written as the answer to `GET_REPAIR_ORDER`; renamed for other BODs.
const BAD_DEALER: &str = fixture!("reynolds/transstatus-bad-dealer.xml");

pub fn router() -> Router {
    Router::new().route(PATH, post(serve))
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
    if action.trim_matches('"') != ACTION {
        return (StatusCode::BAD_REQUEST, "unknown SOAPAction").into_response();
    }
    let Some(doc) = xml::parse(&body) else {
        return (StatusCode::BAD_REQUEST, "not XML").into_response();
    };
    let root = doc.root_element();
    if root.tag_name().name() != "Envelope" || root.tag_name().namespace() != Some(SOAP11_NAMESPACE)
    {
        return (StatusCode::BAD_REQUEST, "not a SOAP 1.1 envelope").into_response();
    }
    let token = xml::descend(
        doc.root(),
        &["Envelope", "Header", "Security", "UsernameToken"],
    );
    if xml::text_at(token, &["Username"]) != USERNAME
        || xml::text_at(token, &["Password"]) != PASSWORD
    {
        return soap(StatusCode::INTERNAL_SERVER_ERROR, FAULT_AUTHENTICATION);
    }
    let content = xml::descend(
        doc.root(),
        &["Envelope", "Body", "ProcessMessage", "payload", "content"],
    );
    let Some(bod) = content.and_then(|c| c.children().find(Node::is_element)) else {
        return (StatusCode::BAD_REQUEST, "no payload").into_response();
    };
    let name = bod.tag_name().name();
    if bod.tag_name().namespace() != Some(STAR_NAMESPACE)
        || ![GET_INVENTORY, GET_REPAIR_ORDER].contains(&name)
    {
        return (StatusCode::BAD_REQUEST, "unknown BOD").into_response();
    }
    let destination = |key| xml::text_at(Some(bod), &["ApplicationArea", "Destination", key]);
    if destination("DealerNumber") != DEALER_NUMBER
        || destination("StoreNumber") != STORE_NUMBER
        || destination("AreaNumber") != AREA_NUMBER
    {
        let answer = BAD_DEALER.replace(&format!("{GET_REPAIR_ORDER}Resp"), &format!("{name}Resp"));
        return soap(StatusCode::OK, answer);
    }
    if name == GET_INVENTORY {
        return soap(StatusCode::OK, INVENTORY);
    }
    let record = |path: &[&str]| {
        let mut full = vec!["Record"];
        full.extend_from_slice(path);
        xml::text_at(Some(bod), &full)
    };
    let ro_number = record(&["Identifier", "RoNo"]);
    let answer = if ro_number.is_empty() {
        match record(&["Query", "TransactionType"]).as_str() {
            "Close" => lookup(&CLOSED, &record(&["Query", "FinalPostDate"])).unwrap_or(NONE),
            "Open" => OPEN,
            _ => return (StatusCode::BAD_REQUEST, "unknown query").into_response(),
        }
    } else {
        return soap(
            StatusCode::OK,
            order_by_number(&ro_number).unwrap_or_else(|| NONE.to_owned()),
        );
    };
    soap(StatusCode::OK, answer)
}

/// A lookup answers an order whichever fixture holds it (as the DMS would
/// any order its lists show): the lookup fixture, else the order's
/// `<RepairOrder>` from a list, in the empty answer after its `TransStatus`.
fn order_by_number(ro_number: &str) -> Option<String> {
    if let Some(doc) = lookup(&LOOKUP, ro_number) {
        return Some(doc.to_owned());
    }
    let needle = format!("RoNo=\"{ro_number}\"");
    let lists = CLOSED.iter().map(|(_, doc)| *doc).chain([OPEN]);
    let (doc, at) = lists
        .filter_map(|doc| doc.find(&needle).map(|at| (doc, at)))
        .next()?;
    let start = doc[..at].rfind("<RepairOrder>")?;
    let end = at + doc[at..].find("</RepairOrder>")? + "</RepairOrder>".len();
    let status_end = NONE.find("</TransStatus>")? + "</TransStatus>".len();
    Some(format!(
        "{}{}{}",
        &NONE[..status_end],
        &doc[start..end],
        &NONE[status_end..]
    ))
}

fn lookup(table: &[(&str, &'static str)], key: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn soap(status: StatusCode, body: impl IntoResponse) -> Response {
    (status, [(header::CONTENT_TYPE, TEXT_XML_UTF8)], body).into_response()
}

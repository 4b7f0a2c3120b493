//! Every `recovery.next_tool_call` works as given: each error with a
//! suggested call that the demo can provoke is provoked, and the suggestion is
//! called exactly as it came (TOOLSET.md "Errors").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use chrono::{Duration, Utc};
use common::*;
use serde_json::{Value, json};

/// Provokes `code` with `tool(args)`, calls its suggestion as given and
/// returns the suggestion's result.
async fn suggestion_of(client: &Client, code: &str, tool: &str, args: Value) -> Value {
    let error = err(&call(client, tool, args).await);
    assert_eq!(error["code"], code, "{error}");
    let next = &error["recovery"]["next_tool_call"];
    let name = next["name"]
        .as_str()
        .unwrap_or_else(|| panic!("no next_tool_call: {error}"));
    let result = call(client, name, next["arguments"].clone()).await;
    assert_ne!(
        result.is_error,
        Some(true),
        "{code}'s suggestion {next} failed: {:?}",
        result.content
    );
    ok(&result)
}

#[tokio::test]
async fn each_suggested_call_the_demo_can_provoke_succeeds_as_given() {
    let bridge = demo().await;
    let cdk_only = connect(&bridge.url, Some("demo-token-cdk")).await;
    let group = connect(&bridge.url, Some("demo-token-group")).await;

    let listed = suggestion_of(
        &cdk_only,
        "auth.forbidden",
        "inventory.search",
        json!({ "dealership_id": "demo-feed" }),
    )
    .await;
    assert_eq!(listed["items"][0]["id"], "demo-cdk");

    // A feed dealership has no DMS behind it.
    suggestion_of(
        &group,
        "capability.unsupported",
        "service.list_repair_orders",
        json!({ "dealership_id": "demo-xmlfeed" }),
    )
    .await;

    let found = suggestion_of(
        &group,
        "inventory.vehicle_not_found",
        "inventory.get",
        json!({ "dealership_id": "demo-cdk", "vehicle_id": "veh_0000000000000000" }),
    )
    .await;
    assert!(!found["items"].as_array().unwrap().is_empty());

    suggestion_of(
        &group,
        "leads.lead_not_found",
        "leads.get",
        json!({ "dealership_id": "demo-cdk", "lead_id": "lead_0000000000000000" }),
    )
    .await;

    suggestion_of(
        &group,
        "service.repair_order_not_found",
        "service.get_repair_order",
        json!({ "dealership_id": "demo-tekion", "ro_number": "99999999" }),
    )
    .await;
}

#[tokio::test]
async fn a_taken_slots_suggestion_books_the_same_customer_at_the_first_open_start() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let from = (Utc::now() + Duration::days(1)).date_naive();
    let open = ok(&call(
        &client,
        "service.check_availability",
        json!({
            "dealership_id": "demo-cdk", "service_codes": ["01LOF"], "year": 2019, "make": "Honda", "model": "Civic",
            "from": from.to_string(), "to": (from + Duration::days(6)).to_string()
        }),
    )
    .await);
    let start = open["items"][0]["start"].as_str().unwrap().to_owned();
    let booking = |key: &str| {
        json!({
            "dealership_id": "demo-cdk", "service_codes": ["01LOF"], "year": 2019, "make": "Honda", "model": "Civic",
            "start": start,
            "customer": { "first_name": "Dana", "last_name": "Whitfield", "email": "dana@example.com" },
            "consent": { "granted_at": "2026-11-01T10:00:00Z", "allowed_channels": ["email"], "scope": ["service_appointment"],
                         "consent_text": "I agree that Riverside Auto Group may email me about this appointment." },
            "comment": "Rattle from the front left.",
            "idempotency_key": key
        })
    };
    ok(&call(
        &client,
        "service.book_appointment",
        booking("recovery-first"),
    )
    .await);
    let rebooked = suggestion_of(
        &client,
        "service.slot_unavailable",
        "service.book_appointment",
        booking("recovery-second"),
    )
    .await;
    assert_eq!(rebooked["status"], "booked", "{rebooked}");
    assert_ne!(rebooked["start"], start.as_str());
    // The service department's number, as AAP's `dealer.phone`.
    assert_eq!(
        rebooked["dealer"],
        json!({ "name": "Riverside Auto Group (Demo)", "phone": "+15125550141" })
    );
}

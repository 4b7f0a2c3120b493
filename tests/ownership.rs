//! Records reached by id belong to the principal that made them through the
//! bridge: another agent with the same scopes on the same dealership can
//! neither see nor change them, and cannot tell them from ids that do not
//! exist. Dealership staff (`amcp:leads:staff`, `amcp:service:staff`) reach
//! every record. Also: dry runs answer what a real call would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use chrono::Duration;
use common::service::{booking, cancel, consent, open_starts};
use common::{assert_in_zone, call, connect, demo_with, err, ok};
use serde_json::{Value, json};

/// A staff token for demo-cdk, as a dealership's own tools would hold.
const STAFF: &str = r#"
[[tokens]]
name = "cdk-staff"
secret = { value = "staff-token-cdk" }
dealerships = ["demo-cdk"]
scopes = ["amcp:leads:read", "amcp:leads:staff", "amcp:service:read", "amcp:service:write", "amcp:service:staff"]
"#;

/// The error's code and message: what a prober could tell apart.
fn code_and_message(result: &rmcp::model::CallToolResult) -> (Value, Value) {
    let e = err(result);
    (e["code"].clone(), e["message"].clone())
}

#[tokio::test]
async fn another_agent_cannot_cancel_a_booking_nor_tell_it_from_an_unknown_id() {
    let bridge = demo_with(STAFF).await;
    let group = connect(&bridge.url, Some("demo-token-group")).await;
    let cdk = connect(&bridge.url, Some("demo-token-cdk")).await;
    let start = open_starts(&group).await[0].clone();
    let booked = ok(&call(&group, "service.book_appointment", booking(&start)).await);
    let id = booked["appointment_id"].as_str().unwrap().to_owned();

    let foreign = code_and_message(&call(&cdk, "service.cancel_appointment", cancel(&id)).await);
    let unknown =
        code_and_message(&call(&cdk, "service.cancel_appointment", cancel("XT-999999")).await);
    assert_eq!(foreign.0, "service.appointment_not_found");
    assert_eq!(foreign, unknown, "someone else's booking looks unknown");
    let mut dry = cancel(&id);
    dry["dry_run"] = json!(true);
    let foreign_dry =
        code_and_message(&call(&cdk, "service.cancel_appointment", dry.clone()).await);
    assert_eq!(foreign_dry, unknown);
    assert!(
        !open_starts(&cdk).await.contains(&start),
        "the booking still holds its slot"
    );

    // Its owner may: a dry run first (nothing changes), then for real.
    let checked = ok(&call(&group, "service.cancel_appointment", dry).await);
    assert_eq!(checked["dry_run"], true);
    assert!(!open_starts(&group).await.contains(&start));
    let done = ok(&call(&group, "service.cancel_appointment", cancel(&id)).await);
    assert_eq!(done["status"], "cancelled");
    assert!(done.get("dry_run").is_none());
    assert!(open_starts(&group).await.contains(&start));
}

#[tokio::test]
async fn staff_cancel_any_booking_and_agents_none_made_outside_the_bridge() {
    let bridge = demo_with(STAFF).await;
    let cdk = connect(&bridge.url, Some("demo-token-cdk")).await;
    let staff = connect(&bridge.url, Some("staff-token-cdk")).await;
    let start = open_starts(&cdk).await[0].clone();
    let booked = ok(&call(&cdk, "service.book_appointment", booking(&start)).await);
    let id = booked["appointment_id"].as_str().unwrap();
    // Staff reach the agent's booking …
    ok(&call(&staff, "service.cancel_appointment", cancel(id)).await);
    assert!(open_starts(&cdk).await.contains(&start));
    // An id the bridge never booked: no agent may cancel it (the scheduler is
    // not asked); staff may (tests/service_booking.rs, where the scheduler knows one).
    let agent =
        code_and_message(&call(&cdk, "service.cancel_appointment", cancel("XT-424242")).await);
    assert_eq!(agent.0, "service.appointment_not_found");
}

/// A staff dry run vouches only for an appointment the bridge booked (an
/// outside audit's staff dry run of an id that exists nowhere answered that
/// it may be cancelled).
#[tokio::test]
async fn a_staff_dry_run_does_not_vouch_for_an_appointment_no_one_booked() {
    let bridge = demo_with(STAFF).await;
    let cdk = connect(&bridge.url, Some("demo-token-cdk")).await;
    let staff = connect(&bridge.url, Some("staff-token-cdk")).await;
    let dry = |id: &str| {
        let mut args = cancel(id);
        args["dry_run"] = json!(true);
        args
    };
    let nowhere =
        code_and_message(&call(&staff, "service.cancel_appointment", dry("XT-000001")).await);
    assert_eq!(nowhere.0, "service.appointment_not_found");
    let start = open_starts(&cdk).await[0].clone();
    let booked = ok(&call(&cdk, "service.book_appointment", booking(&start)).await);
    let id = booked["appointment_id"].as_str().unwrap();
    let checked = ok(&call(&staff, "service.cancel_appointment", dry(id)).await);
    assert_eq!(checked["dry_run"], true);
    assert!(
        !open_starts(&cdk).await.contains(&start),
        "a dry run changes nothing"
    );
}

#[tokio::test]
async fn a_booking_dry_run_refuses_a_taken_slot_and_accepts_an_open_one() {
    let bridge = demo_with("").await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let open = open_starts(&client).await;
    // The demo takes every third half-hour slot: a grid time that is not open is taken.
    let taken = (0..)
        .map(|i| {
            let first = chrono::DateTime::parse_from_rfc3339(&open[0]).unwrap();
            (first + Duration::minutes(30 * i)).to_rfc3339()
        })
        .take(12)
        .find(|s| {
            !open.iter().any(|o| {
                chrono::DateTime::parse_from_rfc3339(o)
                    .unwrap()
                    .to_rfc3339()
                    == *s
            })
        })
        .expect("a taken slot within six hours of the first open one");
    let mut args = booking(&taken);
    args["dry_run"] = json!(true);
    let error = err(&call(&client, "service.book_appointment", args).await);
    assert_eq!(error["code"], "service.slot_unavailable");
    assert!(
        error["recovery"]["slots"]
            .as_array()
            .is_some_and(|s| !s.is_empty())
    );

    let mut args = booking(&open[0]);
    args["dry_run"] = json!(true);
    let preview = ok(&call(&client, "service.book_appointment", args).await);
    assert_eq!(
        (preview["status"].clone(), preview["dry_run"].clone()),
        (json!("booked"), json!(true))
    );
    assert!(
        open_starts(&client).await.contains(&open[0]),
        "a dry run books nothing"
    );
}

fn lead(email: &str) -> Value {
    json!({
        "dealership_id": "demo-cdk", "source_agent": "ownership-test",
        "customer": { "first_name": "Dana", "last_name": "Whitfield", "email": email },
        "consent": consent("lead_submission"),
        "vehicle_of_interest": { "year": 2021, "make": "Honda", "model": "Civic" }
    })
}

fn lead_ids(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["lead_id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn an_agent_sees_its_own_leads_and_staff_see_the_whole_book() {
    let bridge = demo_with(STAFF).await;
    let group = connect(&bridge.url, Some("demo-token-group")).await;
    let cdk = connect(&bridge.url, Some("demo-token-cdk")).await;
    let staff = connect(&bridge.url, Some("staff-token-cdk")).await;
    let theirs = ok(&call(&group, "leads.create", lead("group@example.com")).await)["lead_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mine = ok(&call(&cdk, "leads.create", lead("cdk@example.com")).await)["lead_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let get = |id: &str| json!({ "dealership_id": "demo-cdk", "lead_id": id });
    let foreign = code_and_message(&call(&cdk, "leads.get", get(&theirs)).await);
    let unknown = code_and_message(&call(&cdk, "leads.get", get("ld_0000")).await);
    assert_eq!(foreign.0, "leads.lead_not_found");
    assert_eq!(foreign, unknown, "someone else's lead looks unknown");
    ok(&call(&cdk, "leads.get", get(&mine)).await);
    ok(&call(&group, "leads.get", get(&theirs)).await);

    let list = json!({ "dealership_id": "demo-cdk" });
    assert_eq!(
        lead_ids(&ok(&call(&cdk, "leads.list", list.clone()).await)),
        vec![mine.clone()]
    );
    assert_eq!(
        lead_ids(&ok(&call(&group, "leads.list", list.clone()).await)),
        vec![theirs.clone()]
    );
    let mut all = lead_ids(&ok(&call(&staff, "leads.list", list).await));
    all.sort();
    let mut both = vec![mine, theirs.clone()];
    both.sort();
    assert_eq!(all, both);
    ok(&call(&staff, "leads.get", get(&theirs)).await);

    // The resource mirror of leads.get follows the same rule.
    let uri = format!("dms://dealerships/demo-cdk/leads/{theirs}");
    let read = cdk
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri.clone()))
        .await;
    assert!(
        read.is_err(),
        "another agent's lead is not readable as a resource"
    );
    assert!(
        group
            .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
            .await
            .is_ok()
    );
}

/// An appointment events name can be read, as a tool and as the resource
/// they name, by the agent that booked it and by staff; to anyone else it
/// looks like an id that does not exist (an outside audit found nothing could
/// read `dms://dealerships/{id}/appointments/{id}`).
#[tokio::test]
async fn an_appointment_is_read_by_its_booker_and_staff_and_no_one_else() {
    let bridge = demo_with(STAFF).await;
    let group = connect(&bridge.url, Some("demo-token-group")).await;
    let cdk = connect(&bridge.url, Some("demo-token-cdk")).await;
    let staff = connect(&bridge.url, Some("staff-token-cdk")).await;
    let start = open_starts(&group).await[0].clone();
    let booked = ok(&call(&group, "service.book_appointment", booking(&start)).await);
    let id = booked["appointment_id"].as_str().unwrap().to_owned();
    let get = json!({ "dealership_id": "demo-cdk", "appointment_id": id });

    let mine = ok(&call(&group, "service.get_appointment", get.clone()).await);
    assert_eq!(
        (&mine["appointment_id"], &mine["status"]),
        (&json!(id), &json!("booked"))
    );
    // The demo-cdk dealership's offset, as every time the tools answer.
    assert_in_zone(&mine["booked_at"], chrono_tz::America::Chicago);
    assert_eq!(
        mine["dealer"]["name"], "Riverside Auto Group (Demo)",
        "{mine}"
    );
    let seen_by_staff = ok(&call(&staff, "service.get_appointment", get.clone()).await);
    assert_eq!(seen_by_staff["status"], "booked");
    let foreign = code_and_message(&call(&cdk, "service.get_appointment", get.clone()).await);
    let unknown = code_and_message(
        &call(
            &cdk,
            "service.get_appointment",
            json!({ "dealership_id": "demo-cdk", "appointment_id": "XT-999999" }),
        )
        .await,
    );
    assert_eq!(foreign.0, "service.appointment_not_found");
    assert_eq!(foreign, unknown, "someone else's appointment looks unknown");

    // The URI events name reads the same, for its booker only.
    let uri = format!("dms://dealerships/demo-cdk/appointments/{id}");
    let read = group
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri.clone()))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("{read:?}")
    };
    let body: Value = serde_json::from_str(text).unwrap();
    assert_eq!(body["appointment_id"], id.as_str());
    let refused = cdk
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        .await;
    assert!(refused.is_err(), "{refused:?}");

    ok(&call(&group, "service.cancel_appointment", cancel(&id)).await);
    let after = ok(&call(&group, "service.get_appointment", get).await);
    assert_eq!(after["status"], "cancelled");
    assert!(after["cancelled_at"].is_string(), "{after}");
}

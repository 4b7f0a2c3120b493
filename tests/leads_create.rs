//! `leads.create` end to end on the demo: the lead is committed, answered, and
//! delivered as ADF to the demo CRM's HTTP intake (demo-cdk) and mailbox
//! (demo-feed); `leads.get`/`leads.list` show it with customer data masked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::leads::{lead, wait_delivery};
use common::{call, connect, demo, err, ok};
use dms_bridge::adf::{self, Interest};
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::json;

#[tokio::test]
async fn a_lead_reaches_the_crm_http_intake_as_adf() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let search = ok(&call(
        &client,
        "inventory.search",
        json!({ "response_format": "detailed", "dealership_id": "demo-cdk", "limit": 1 }),
    )
    .await);
    let vehicle = &search["items"][0];
    let mut args = lead("demo-cdk", 1);
    args["vehicle_of_interest"] = json!({ "vehicle_id": vehicle["id"] });
    args["trade_in"] = json!({ "year": 2015, "make": "Honda", "model": "Civic", "mileage": 88000, "condition": "good" });
    args["appointment"] = json!({ "appointment_type": "test_drive", "notes": "Bring the keys" });

    let answer = ok(&call(&client, "leads.create", args).await);
    assert_eq!(answer["status"], "received");
    assert_eq!(answer["appointment"]["status"], "requested");
    assert_eq!(answer["dealer"]["name"], "Riverside Auto Group (Demo)");
    let lead_id = answer["lead_id"].as_str().unwrap();

    let view = wait_delivery(
        &client,
        "demo-cdk",
        lead_id,
        "delivered",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(view["delivery"]["channel"], "adf_http");
    assert_eq!(view["delivery"]["receipt"], "crm-1");
    assert_eq!(view["customer"]["name"], "D. W.");
    assert_eq!(view["customer"]["email"], "d***@e***.com");
    assert_eq!(view["customer"]["phone"], "+*******0188");
    assert_eq!(view["consent"]["allowed_channels"], json!(["email", "sms"]));

    let crm = &bridge.mocks.as_ref().unwrap().crm;
    let received = crm.leads();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].adf_id, lead_id);
    assert_eq!(received[0].status, "new");
    let doc = adf::parse(received[0].document.as_bytes())
        .unwrap()
        .remove(0);
    assert_eq!(doc.vendor.name, "Riverside Auto Group (Demo)");
    assert_eq!(doc.provider.unwrap().name, "test-agent");
    assert_eq!(
        doc.customer.contact.email.as_deref(),
        Some("dana1@example.com")
    );
    let wanted = doc
        .vehicles
        .iter()
        .find(|v| v.interest == Interest::TestDrive)
        .unwrap();
    // Filled in from the dealership's inventory: the caller sent only the id.
    assert_eq!(wanted.make.as_deref(), vehicle["make"].as_str());
    assert_eq!(wanted.vin.as_deref(), vehicle["vin"].as_str());
    let trade = doc
        .vehicles
        .iter()
        .find(|v| v.interest == Interest::TradeIn)
        .unwrap();
    assert_eq!(trade.condition.as_deref(), Some("good"));
    assert_eq!(trade.odometer.as_ref().unwrap().value, 88000);
    let comments = doc.customer.comments.unwrap();
    assert!(comments.contains("Is it still available?"), "{comments}");
    assert!(
        comments.contains("Contact consent: email, sms"),
        "{comments}"
    );

    // The lead is also a resource (AutomotiveMCP Level 1), read through the same pipeline.
    let uri = format!("dms://dealerships/demo-cdk/leads/{lead_id}");
    let read = client
        .read_resource(ReadResourceRequestParams::new(uri.clone()))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("not text: {read:?}")
    };
    let resource: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(resource["lead_id"], lead_id);
    assert_eq!(resource["delivery"]["state"], "delivered");
    let missing = client
        .read_resource(ReadResourceRequestParams::new(
            "dms://dealerships/demo-cdk/leads/ld_nope".to_owned(),
        ))
        .await;
    assert!(missing.is_err());
}

#[tokio::test]
async fn a_lead_reaches_the_crm_mailbox_as_the_whole_body() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let answer = ok(&call(&client, "leads.create", lead("demo-feed", 2)).await);
    let lead_id = answer["lead_id"].as_str().unwrap();
    let view = wait_delivery(
        &client,
        "demo-feed",
        lead_id,
        "delivered",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(view["delivery"]["channel"], "adf_email");

    let smtp = &bridge.mocks.as_ref().unwrap().smtp;
    let mail = smtp.wait_for(1, Duration::from_secs(5)).await.remove(0);
    assert_eq!(mail.rcpt_to, ["leads@lakeside-crm.example"]);
    assert_eq!(
        mail.subject.as_deref(),
        Some(format!("ADF lead {lead_id}").as_str())
    );
    assert!(mail.content_type.unwrap().starts_with("text/plain"));
    assert!(
        mail.body
            .starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
    );
    let doc = adf::parse(mail.body.as_bytes()).unwrap().remove(0);
    assert_eq!(doc.ids[0].value, lead_id);
    assert_eq!(doc.vendor.name, "Lakeside Toyota Subaru Kia (Demo)");
    let message_id = view["delivery"]["receipt"].as_str().unwrap();
    assert_eq!(
        Some(message_id.trim_matches(['<', '>'])),
        mail.message_id.as_deref()
    );
}

#[tokio::test]
async fn a_dry_run_renders_the_adf_and_stores_and_sends_nothing() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let mut args = lead("demo-cdk", 3);
    args["dry_run"] = json!(true);
    args["submitted_at"] = json!("2026-05-01T14:03:00-05:00");
    args["consent"]["granted_at"] = json!("2026-05-01T14:02:00-05:00");
    let answer = ok(&call(&client, "leads.create", args).await);
    assert_eq!(answer["dry_run"], true);
    assert_eq!(answer["delivery"]["state"], "not_sent");
    let lead_id = answer["lead_id"].as_str().unwrap();
    let document = answer["adf_document"]
        .as_str()
        .unwrap()
        .replace(lead_id, "LEAD_ID");
    insta::assert_snapshot!("dry_run_adf", document);

    let list = ok(&call(
        &client,
        "leads.list",
        json!({ "dealership_id": "demo-cdk" }),
    )
    .await);
    assert_eq!(list["items"], json!([]));
    let missing = err(&call(
        &client,
        "leads.get",
        json!({ "dealership_id": "demo-cdk", "lead_id": lead_id }),
    )
    .await);
    assert_eq!(missing["code"], "leads.lead_not_found");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(bridge.mocks.as_ref().unwrap().crm.requests(), 0);
}

#[tokio::test]
async fn leads_list_pages_newest_first_and_filters_by_delivery_state() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let answer = ok(&call(&client, "leads.create", lead("demo-cdk", 10 + n)).await);
        ids.push(answer["lead_id"].as_str().unwrap().to_owned());
    }
    for id in &ids {
        wait_delivery(
            &client,
            "demo-cdk",
            id,
            "delivered",
            Duration::from_secs(10),
        )
        .await;
    }
    let first = ok(&call(
        &client,
        "leads.list",
        json!({ "dealership_id": "demo-cdk", "limit": 3 }),
    )
    .await);
    let second = ok(&call(
        &client,
        "leads.list",
        json!({ "dealership_id": "demo-cdk", "limit": 3, "cursor": first["next_cursor"] }),
    )
    .await);
    assert!(second.get("next_cursor").is_none());
    let listed: Vec<&str> = first["items"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["items"].as_array().unwrap())
        .map(|l| l["lead_id"].as_str().unwrap())
        .collect();
    let newest_first: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
    assert_eq!(listed, newest_first);
    let failed = ok(&call(
        &client,
        "leads.list",
        json!({ "dealership_id": "demo-cdk", "delivery_state": ["failed"] }),
    )
    .await);
    assert_eq!(failed["items"], json!([]));
}

#[tokio::test]
async fn an_appointment_outside_opening_hours_is_proposed_with_times_that_fit() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    // 03:00 in Chicago tomorrow: the sales floor is closed every day at that hour.
    let tz = chrono_tz::America::Chicago;
    let tomorrow = chrono::Utc::now().with_timezone(&tz).date_naive() + chrono::Duration::days(1);
    let at = tomorrow
        .and_hms_opt(3, 0, 0)
        .unwrap()
        .and_local_timezone(tz)
        .unwrap();
    let mut args = lead("demo-cdk", 4);
    args["appointment"] = json!({ "appointment_type": "sales", "appointment_at": at.to_rfc3339() });
    let answer = ok(&call(&client, "leads.create", args).await);
    let appointment = &answer["appointment"];
    assert_eq!(appointment["status"], "proposed");
    let times = appointment["proposed_times"].as_array().unwrap();
    assert_eq!(times.len(), 3);
    // Riverside's sales floor opens at 09:00 (Saturday too), closed on Sunday.
    assert!(
        times[0].as_str().unwrap().contains("T09:00:00-0"),
        "{times:?}"
    );
    assert!(appointment.get("confirmed_at").is_none());
}

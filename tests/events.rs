//! `events.list` over the leads path: a lead and its delivery become events
//! in the transaction that records them; callers see only what their scopes
//! and the ownership rules allow; cursors resume exactly; events carry no
//! customer data.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::config::Token;
use common::leads::{accepting_intake, lead, leads, wait_delivery};
use common::{Client, call, connect, err, ok, problem_pointers};
use serde_json::{Value, json};

async fn bridge() -> (wiremock::MockServer, common::Bridge) {
    let intake = accepting_intake().await;
    let config = leads(&intake.uri())
        .token(Token::new(
            "agent2",
            "agent2-token",
            &["acme"],
            &["amcp:leads:write", "amcp:leads:read"],
        ))
        .token(Token::new(
            "viewer",
            "viewer-token",
            &["acme"],
            &["amcp:inventory:read"],
        ))
        .render();
    (intake, common::with_config(&config).await)
}

async fn create(client: &Client, n: usize) -> String {
    let made = ok(&call(client, "leads.create", lead("acme", n)).await);
    made["lead_id"].as_str().unwrap().to_owned()
}

async fn events(client: &Client, args: Value) -> Value {
    let mut args = args;
    args["dealership_id"] = json!("acme");
    ok(&call(client, "events.list", args).await)
}

fn about(page: &Value) -> Vec<(String, String)> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                e["resource"]["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_lead_and_its_delivery_are_events_for_its_owner_and_staff_only() {
    let (_intake, bridge) = bridge().await;
    let agent = connect(&bridge.url, Some("agent-token")).await;
    let agent2 = connect(&bridge.url, Some("agent2-token")).await;
    let staff = connect(&bridge.url, Some("reader-token")).await;
    let mine = create(&agent, 1).await;
    let theirs = create(&agent2, 2).await;
    for (client, id) in [(&agent, &mine), (&agent2, &theirs)] {
        wait_delivery(client, "acme", id, "delivered", Duration::from_secs(10)).await;
    }

    let own = events(&agent, json!({})).await;
    assert_eq!(
        about(&own),
        vec![
            ("lead.created".to_owned(), mine.clone()),
            ("lead.delivery_updated".to_owned(), mine.clone()),
        ]
    );
    let delivered = &own["items"][1];
    assert_eq!(delivered["data"]["delivery_state"], "delivered");
    assert_eq!(delivered["data"]["attempts"], 1);
    assert_eq!(delivered["change"], "updated");
    assert_eq!(
        delivered["resource"]["uri"],
        format!("dms://dealerships/acme/leads/{mine}")
    );
    assert_eq!(own["has_more"], false);

    let all = events(&staff, json!({})).await;
    let ids: Vec<String> = about(&all).into_iter().map(|(_, id)| id).collect();
    assert_eq!(ids.iter().filter(|id| **id == mine).count(), 2);
    assert_eq!(ids.iter().filter(|id| **id == theirs).count(), 2);

    // No customer data, in any event.
    let text = all.to_string().to_lowercase();
    for planted in ["dana", "whitfield", "example.com", "5125550188"] {
        assert!(!text.contains(planted), "{planted} in {text}");
    }

    // Scopes: an inventory-only token sees no lead events and may not ask for them.
    let viewer = connect(&bridge.url, Some("viewer-token")).await;
    assert_eq!(about(&events(&viewer, json!({})).await), vec![]);
    let mut refused = json!({ "dealership_id": "acme", "types": ["lead.created"] });
    let error = err(&call(&viewer, "events.list", refused.clone()).await);
    assert_eq!(error["code"], "auth.forbidden");
    assert_eq!(error["details"]["required_scope"], "amcp:leads:read");
    refused["cursor"] = json!("12");
    let error = err(&call(&agent, "events.list", refused).await);
    assert_eq!(error["code"], "request.invalid_arguments");
    assert_eq!(problem_pointers(&error), vec!["/cursor"]);
}

#[tokio::test]
async fn a_cursor_resumes_exactly_where_the_last_page_ended() {
    let (_intake, bridge) = bridge().await;
    let agent = connect(&bridge.url, Some("agent-token")).await;
    let staff = connect(&bridge.url, Some("reader-token")).await;
    let mut ids = Vec::new();
    for n in 0..7 {
        ids.push(create(&agent, 10 + n).await);
    }
    for id in &ids {
        wait_delivery(&agent, "acme", id, "delivered", Duration::from_secs(10)).await;
    }
    let (mut cursor, mut seen, mut pages) = (None::<String>, Vec::new(), 0);
    loop {
        let mut args = json!({ "limit": 3 });
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = events(&staff, args).await;
        pages += 1;
        seen.extend(page["items"].as_array().unwrap().iter().cloned());
        cursor = Some(page["next_cursor"].as_str().unwrap().to_owned());
        if page["has_more"] == false {
            break;
        }
        assert!(pages < 10);
    }
    let sequences: Vec<u64> = seen
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(sequences, (1..=14).collect::<Vec<u64>>());
    assert_eq!(pages, 5, "14 events in pages of 3");

    // Caught up: nothing more, and the cursor stays put.
    let idle = events(&staff, json!({ "cursor": cursor })).await;
    assert_eq!(idle["items"], json!([]));
    assert_eq!(idle["next_cursor"].as_str(), cursor.as_deref());

    // A new event shows after that cursor, and only it.
    let late = create(&agent, 99).await;
    let next = events(
        &staff,
        json!({ "cursor": cursor, "types": ["lead.created"] }),
    )
    .await;
    assert_eq!(
        about(&next),
        vec![("lead.created".to_owned(), late.clone())]
    );

    // One resource's events only.
    let one = events(
        &staff,
        json!({ "resource": { "kind": "lead", "id": ids[3] } }),
    )
    .await;
    assert_eq!(
        about(&one),
        vec![
            ("lead.created".to_owned(), ids[3].clone()),
            ("lead.delivery_updated".to_owned(), ids[3].clone()),
        ]
    );
}

/// Events cursors are signed and bound to their dealership, as every other
/// cursor is (they were bare sequence numbers, `ev.<n>`, before: any caller
/// could write one, and one dealership's served for another's).
#[tokio::test]
async fn an_events_cursor_cannot_be_forged_or_used_for_another_dealership() {
    let bridge = common::demo().await;
    let group = connect(&bridge.url, Some("demo-token-group")).await;
    let page = |dealership: &str, cursor: Option<&str>| {
        let mut args = json!({ "dealership_id": dealership, "limit": 5 });
        if let Some(c) = cursor {
            args["cursor"] = json!(c);
        }
        call(&group, "events.list", args)
    };
    let first = ok(&page("demo-cdk", None).await);
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    assert!(!cursor.starts_with("ev."), "{cursor}");
    ok(&page("demo-cdk", Some(&cursor)).await);

    let elsewhere = err(&page("demo-feed", Some(&cursor)).await);
    assert_eq!(
        elsewhere["code"], "request.invalid_arguments",
        "{elsewhere}"
    );
    assert_eq!(problem_pointers(&elsewhere), vec!["/cursor"]);
    let mut altered = cursor.clone().into_bytes();
    altered[2] ^= 1;
    let altered = String::from_utf8(altered).unwrap();
    for forged in ["ev.0", "ev.999999", altered.as_str()] {
        let refused = err(&page("demo-cdk", Some(forged)).await);
        assert_eq!(problem_pointers(&refused), vec!["/cursor"], "{forged}");
    }
}

//! The Auto Agent Protocol door (AAP v1.3 over A2A v1.0 JSON-RPC) on the
//! running demo, over real sockets: agent cards, every skill, AAP's own
//! published schemas and examples (`aap/v1.3/`), the negatives of the MCP
//! door (another dealership, a forged token, no consent, a replayed key with
//! another payload, hostile text), and one lead across both doors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use chrono::{Duration, Utc};
use dms_bridge::aap::{Skill, schemas};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::{self, Bridge, advance_demo_feed, call, connect, demo, demo_edited, err, ok};

const EXAMPLES: &str = "aap/v1.3/examples";

fn base(bridge: &Bridge) -> String {
    format!("http://{}", bridge.addr)
}

/// The SendMessage envelope for one AAP request, as an A2A 1.0 client sends it.
fn envelope(data: &Value) -> Value {
    let skill = Skill::from_request_type(data["type"].as_str().unwrap_or(""));
    let (input, output) = skill.map_or((String::new(), String::new()), |s| {
        (s.request_media_type(), s.response_media_type())
    });
    json!({
        "jsonrpc": "2.0", "id": "req-1", "method": "SendMessage",
        "params": {
            "message": { "messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
                "parts": [{ "data": data, "mediaType": input }] },
            "configuration": { "acceptedOutputModes": [output] },
        },
    })
}

async fn post(
    bridge: &Bridge,
    dealership: &str,
    token: Option<&str>,
    body: &Value,
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/aap/{dealership}", base(bridge)))
        .header("A2A-Version", "1.0")
        .json(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text).unwrap_or_else(|_| json!({ "raw": text }));
    (status, headers, value)
}

/// Sends one AAP request; the JSON-RPC answer.
async fn send(bridge: &Bridge, dealership: &str, token: Option<&str>, data: Value) -> Value {
    let (status, _, answer) = post(bridge, dealership, token, &envelope(&data)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

/// The AAP answer part of a result, checked against its skill's response schema.
fn answered(answer: &Value, skill: Skill) -> Value {
    let message = &answer["result"]["message"];
    assert_eq!(message["role"], "ROLE_AGENT", "{answer}");
    assert!(message["contextId"].as_str().is_some_and(|c| !c.is_empty()));
    let part = &message["parts"][0];
    assert_eq!(part["mediaType"], skill.response_media_type().as_str());
    let problems = schemas::check_response(skill, &part["data"]).unwrap();
    assert!(
        problems.is_empty(),
        "{} answer breaks AAP's schema: {problems:?}\n{}",
        skill.id(),
        part["data"]
    );
    part["data"]["data"].clone()
}

/// The `aap.error` of an error answer, checked against AAP's error schema;
/// asserts its code and JSON-RPC code and that the message leads with the code.
fn failed(answer: &Value, code: &str, rpc: i64) -> Value {
    let error = &answer["error"];
    assert_eq!(error["code"], rpc, "{answer}");
    assert_eq!(error["data"]["code"], code, "{answer}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{code}: ")),
        "{answer}"
    );
    let problems = schemas::check_error(&error["data"]).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    error["data"].clone()
}

fn example(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(EXAMPLES)
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn consent(channels: &[&str]) -> Value {
    json!({
        "granted_at": (Utc::now() - Duration::minutes(2)).to_rfc3339(),
        "allowed_channels": channels,
        "consent_text": "I agree that the dealership may contact me about this vehicle.",
        "scope": ["lead_submission"],
    })
}

fn lead(email: &str, key: &str) -> Value {
    json!({
        "type": "lead.submit.request",
        "customer": { "first_name": "Ada", "last_name": "Quinn", "email": email, "preferred_contact": "email" },
        "consent": consent(&["email"]),
        "source_agent": { "name": "aap-door-test", "url": "https://agent.example" },
        "message": "Is the car still there?",
        "idempotency_key": key,
    })
}

async fn card(bridge: &Bridge, path: &str) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let response = common::http_get(format!("{}{path}", base(bridge)))
        .await
        .unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    (
        status,
        headers,
        response.json().await.unwrap_or(Value::Null),
    )
}

fn skill_ids(card: &Value) -> Vec<String> {
    card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn cards_offer_what_each_dealership_can_back_and_fit_aap() {
    let bridge = demo_edited(|toml| {
        // demo-tekion has inventory and no lead route: no lead.submit on its card.
        toml.replacen(
            "id = \"demo-tekion\"\n",
            "id = \"demo-tekion\"\naap = true\n",
            1,
        )
    })
    .await;
    let (status, headers, feed) = card(&bridge, "/aap/demo-feed/.well-known/agent-card.json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        schemas::check_card(&feed).unwrap().is_empty(),
        "{:?}",
        schemas::check_card(&feed)
    );
    assert_eq!(
        feed["supportedInterfaces"][0]["url"],
        format!("{}/aap/demo-feed", base(&bridge))
    );
    assert_eq!(feed["supportedInterfaces"][0]["protocolVersion"], "1.0");
    let extension = &feed["capabilities"]["extensions"][0];
    assert_eq!(
        extension["uri"],
        "https://autoagentprotocol.org/extensions/aap/v1.3"
    );
    assert_eq!(extension["params"]["version"], "1.3.0");
    assert_eq!(skill_ids(&feed).len(), 5);
    // Anonymous reads at demo-feed; a lead needs a token.
    for skill in feed["skills"].as_array().unwrap() {
        let needs_token = skill.get("securityRequirements").is_some();
        assert_eq!(needs_token, skill["id"] == "lead.submit", "{skill}");
    }
    // demo-cdk allows no anonymous caller: every skill asks for the bearer.
    let (_, _, cdk) = card(&bridge, "/aap/demo-cdk/.well-known/agent-card.json").await;
    assert!(
        cdk["skills"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.get("securityRequirements").is_some())
    );
    let (_, _, tekion) = card(&bridge, "/aap/demo-tekion/.well-known/agent-card.json").await;
    assert!(
        !skill_ids(&tekion).contains(&"lead.submit".to_owned()),
        "{tekion}"
    );
    let refused = send(
        &bridge,
        "demo-tekion",
        Some("demo-token-group"),
        lead("t@example.com", "k-tekion"),
    )
    .await;
    failed(&refused, "UNSUPPORTED_SKILL", -32601);
    // Not served over AAP: no card, no endpoint.
    let (status, _, _) = card(&bridge, "/aap/demo-reynolds/.well-known/agent-card.json").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = post(
        &bridge,
        "demo-reynolds",
        None,
        &envelope(&json!({"type": "dealer.information.request"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // The host's well-known card is [aap] well_known's, cacheable by its ETag.
    let (_, _, root) = card(&bridge, "/.well-known/agent-card.json").await;
    assert_eq!(root, feed);
    let etag = headers["etag"].to_str().unwrap().to_owned();
    let again = reqwest::Client::new()
        .get(format!("{}/.well-known/agent-card.json", base(&bridge)))
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert!(
        headers["cache-control"]
            .to_str()
            .unwrap()
            .contains("max-age")
    );
}

#[tokio::test]
async fn a_public_url_names_the_interface_behind_a_proxy() {
    let bridge = demo_edited(|toml| {
        toml.replacen(
            "[aap]\n",
            "[aap]\npublic_url = \"https://agents.riverside.example/\"\n",
            1,
        )
    })
    .await;
    let (_, _, feed) = card(&bridge, "/aap/demo-feed/.well-known/agent-card.json").await;
    assert_eq!(
        feed["supportedInterfaces"][0]["url"],
        "https://agents.riverside.example/aap/demo-feed"
    );
}

/// Example dates that have passed move to the same time of day a few days
/// ahead: no dealer can accept an appointment on a day gone by.
fn current(mut request: Value) -> Value {
    if let Some(at) = request["appointment"]["appointment_at"].as_str() {
        let at = chrono::DateTime::parse_from_rfc3339(at).unwrap();
        let days = (Utc::now().date_naive() - at.date_naive()).num_days() + 3;
        request["appointment"]["appointment_at"] = json!((at + Duration::days(days)).to_rfc3339());
    }
    if request.get("idempotency_key").is_some() {
        request["idempotency_key"] = json!(uuid::Uuid::new_v4().to_string());
    }
    request
}

/// The VINs of a request whose check digit is wrong, with the digit put right.
fn bad_check_digits(request: &Value) -> Vec<(String, String)> {
    use dms_bridge::model::vin;
    ["/vin", "/vehicle_of_interest/vin", "/trade_in/vin"]
        .into_iter()
        .filter_map(|at| Some((at, request.pointer(at)?.as_str()?)))
        .filter(|(_, v)| vin::check(v).is_err())
        .map(|(at, v)| {
            let fixed = "0123456789X"
                .chars()
                .map(|d| format!("{}{d}{}", &v[..8], &v[9..]))
                .find(|c| vin::check(c).is_ok())
                .unwrap();
            (at.to_owned(), fixed)
        })
        .collect()
}

#[tokio::test]
async fn every_published_example_request_is_accepted_and_every_answer_fits_aap() {
    let bridge = demo().await;
    let mut names: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(EXAMPLES))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
    names.sort();
    let mut seen = std::collections::BTreeSet::new();
    for name in names
        .iter()
        .filter(|n| n.contains("-request") && !n.contains(".jsonrpc."))
    {
        let request = current(example(name));
        let skill = Skill::from_request_type(request["type"].as_str().unwrap()).unwrap();
        assert!(
            schemas::check_request(skill, &request).unwrap().is_empty(),
            "{name}"
        );
        let answer = send(
            &bridge,
            "demo-feed",
            Some("demo-token-group"),
            request.clone(),
        )
        .await;
        // AAP's examples use VINs whose check digit is wrong (1HGCY2F57RA000001):
        // both doors refuse those, naming the field; with the digit right, it goes in.
        let answer = match bad_check_digits(&request) {
            fixed if fixed.is_empty() => answer,
            fixed => {
                let refused = failed(&answer, "SCHEMA_VALIDATION_FAILED", -32602);
                for (at, _) in &fixed {
                    assert!(
                        refused.to_string().contains(&format!("\"{at}\"")),
                        "{name}: {refused}"
                    );
                }
                let mut corrected = request;
                for (at, vin) in fixed {
                    *corrected.pointer_mut(&at).unwrap() = json!(vin);
                }
                send(&bridge, "demo-feed", Some("demo-token-group"), corrected).await
            }
        };
        match skill {
            // The examples' VIN is not in the demo's stock: found or not, never a schema refusal.
            Skill::InventoryVehicle => {
                failed(&answer, "VEHICLE_NOT_FOUND", -32000);
            }
            Skill::LeadSubmit => {
                let data = answered(&answer, skill);
                assert_eq!(data["status"], "received", "{name}: {answer}");
            }
            _ => {
                answered(&answer, skill);
            }
        }
        seen.insert(skill);
    }
    assert_eq!(seen.len(), 5, "an example for every skill");
    // The published envelope as is, and its answer shaped like the published one.
    let (status, _, answer) = post(
        &bridge,
        "demo-feed",
        None,
        &example("inventory-search-request.jsonrpc.example.json"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    answered(&answer, Skill::InventorySearch);
    let published = example("inventory-search-response.jsonrpc.example.json");
    assert_eq!(answer["id"], published["id"]);
    let (ours, theirs) = (
        &answer["result"]["message"]["parts"][0],
        &published["result"]["message"]["parts"][0],
    );
    assert_eq!(ours["mediaType"], theirs["mediaType"]);
    assert_eq!(ours["data"]["type"], theirs["data"]["type"]);
    // Our reading of the schemas agrees with AAP's own example answers.
    for name in names
        .iter()
        .filter(|n| n.contains("-response") && !n.contains(".jsonrpc."))
    {
        let part = example(name);
        let skill = Skill::from_request_type(
            &part["type"]
                .as_str()
                .unwrap()
                .replace(".response", ".request"),
        )
        .unwrap();
        assert!(
            schemas::check_response(skill, &part).unwrap().is_empty(),
            "{name}"
        );
    }
}

#[tokio::test]
async fn anonymous_search_lists_live_units_with_aap_prices_and_pages_by_skip() {
    let bridge = demo().await;
    let search = |pagination: Value| {
        json!({ "type": "inventory.search.request", "sort": { "field": "price", "order": "asc" },
                "pagination": pagination, "privacy": { "anonymous": true } })
    };
    let all = answered(
        &send(&bridge, "demo-feed", None, search(json!({ "limit": 100 }))).await,
        Skill::InventorySearch,
    );
    let vehicles = all["vehicles"].as_array().unwrap();
    // A page may be cut short by the answer budget (BENCHMARKS.md "Tokens"), never padded.
    assert!(vehicles.len() > 10 && vehicles.len() as u64 <= all["total"].as_u64().unwrap());
    for v in vehicles {
        assert!(
            ["available", "intransit", "pending"].contains(&v["status"].as_str().unwrap()),
            "{v}"
        );
        assert!(v["updated_at"].as_str().is_some(), "{v}");
    }
    let prices: Vec<i64> = vehicles
        .iter()
        .filter_map(|v| v["price"].as_i64())
        .collect();
    assert!(prices.windows(2).all(|w| w[0] <= w[1]), "sorted by price");
    // The same search by MCP: AAP's price is the canonical price in whole dollars.
    let client = connect(&bridge.url, None).await;
    let mcp = ok(&call(&client, "inventory.search", json!({ "dealership_id": "demo-feed", "sort": { "field": "price" }, "limit": 100, "response_format": "detailed" })).await);
    for (aap, canonical) in vehicles.iter().zip(mcp["items"].as_array().unwrap()) {
        assert_eq!(aap["vehicle_id"], canonical["id"]);
        if let Some(cents) = canonical["price"]["amount"].as_i64() {
            assert_eq!(aap["price"].as_i64().unwrap(), (cents + 99) / 100);
        }
    }
    // skip pages as an offset into the same order; the answer echoes it.
    let page = answered(
        &send(
            &bridge,
            "demo-feed",
            None,
            search(json!({ "skip": 3, "limit": 4 })),
        )
        .await,
        Skill::InventorySearch,
    );
    assert_eq!(
        (page["skip"].as_u64(), page["limit"].as_u64()),
        (Some(3), Some(4))
    );
    assert_eq!(page["vehicles"].as_array().unwrap()[..], vehicles[3..7]);
    // A limit over the operator's cap is cut to it, and says so.
    let capped = answered(
        &send(&bridge, "demo-feed", None, search(json!({ "limit": 1000 }))).await,
        Skill::InventorySearch,
    );
    assert_eq!(capped["limit"], 100);
    // Python's A2A SDK sends whole numbers as floats.
    let floats = json!({ "type": "inventory.search.request", "filters": { "year_min": 2020.0, "price_max": 30000.0 }, "pagination": { "limit": 2.0 } });
    let found = answered(
        &send(&bridge, "demo-feed", None, floats).await,
        Skill::InventorySearch,
    );
    assert!(found["vehicles"].as_array().unwrap().len() <= 2);
    assert!(
        found["vehicles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["price"].as_i64().unwrap() <= 30000)
    );
    // No unit here is a motorcycle or carries EV range data: such filters match nothing.
    for filters in [
        json!({ "vehicle_type": ["motorcycle"] }),
        json!({ "electric_range_mi_min": 100 }),
        json!({ "rooftops": ["Elsewhere Motors"] }),
    ] {
        let none = answered(
            &send(
                &bridge,
                "demo-feed",
                None,
                json!({ "type": "inventory.search.request", "filters": filters }),
            )
            .await,
            Skill::InventorySearch,
        );
        assert_eq!(none["total"], 0, "{filters}");
    }
    let cars = answered(&send(&bridge, "demo-feed", None, json!({ "type": "inventory.search.request", "filters": { "vehicle_type": ["car", "motorcycle"] } })).await, Skill::InventorySearch);
    assert_eq!(cars["total"], all["total"]);
}

#[tokio::test]
async fn sold_units_are_never_listed_and_answer_vehicle_unavailable() {
    let bridge = demo().await;
    let search = json!({ "type": "inventory.search.request", "pagination": { "limit": 100 } });
    answered(
        &send(&bridge, "demo-feed", None, search.clone()).await,
        Skill::InventorySearch,
    );
    advance_demo_feed(&bridge).await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let events = ok(&call(
        &client,
        "events.list",
        json!({ "dealership_id": "demo-feed", "limit": 100 }),
    )
    .await);
    let sold: Vec<String> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "vehicle.deleted")
        .map(|e| e["data"]["vin"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(sold.len(), 3);
    let after = answered(
        &send(&bridge, "demo-feed", None, search).await,
        Skill::InventorySearch,
    );
    let listed: Vec<&str> = after["vehicles"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["vin"].as_str())
        .collect();
    for vin in &sold {
        assert!(!listed.contains(&vin.as_str()), "sold {vin} listed");
        let gone = send(
            &bridge,
            "demo-feed",
            None,
            json!({ "type": "inventory.vehicle.request", "vin": vin }),
        )
        .await;
        failed(&gone, "VEHICLE_UNAVAILABLE", -32000);
    }
    let facets = answered(
        &send(
            &bridge,
            "demo-feed",
            None,
            json!({ "type": "inventory.facets.request" }),
        )
        .await,
        Skill::InventoryFacets,
    );
    let counted: u64 = facets["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["count"].as_u64().unwrap())
        .sum();
    assert_eq!(
        counted,
        after["total"].as_u64().unwrap(),
        "facets count only live units"
    );
}

#[tokio::test]
async fn one_lead_across_both_doors() {
    let bridge = demo().await;
    let email = format!("one-lead-{}@example.com", uuid::Uuid::new_v4().simple());
    let submitted = lead(&email, "key-one");
    let first = answered(
        &send(
            &bridge,
            "demo-feed",
            Some("demo-token-group"),
            submitted.clone(),
        )
        .await,
        Skill::LeadSubmit,
    );
    assert_eq!(first["status"], "received");
    // The same lead by MCP, same token: AAP's duplicate, the same lead id.
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let mut args = lead(&email, "key-two");
    args["dealership_id"] = json!("demo-feed");
    args["source_agent"] = json!("aap-door-test");
    let by_mcp = ok(&call(&client, "leads.create", args).await);
    assert_eq!(
        (by_mcp["status"].as_str(), &by_mcp["lead_id"]),
        (Some("duplicate"), &first["lead_id"])
    );
    // The same key again over AAP replays the first answer.
    let replay = answered(
        &send(&bridge, "demo-feed", Some("demo-token-group"), submitted).await,
        Skill::LeadSubmit,
    );
    assert_eq!(replay["lead_id"], first["lead_id"]);
    // The lead is readable by MCP, with the AAP agent's name as its source.
    let stored = ok(&call(
        &client,
        "leads.get",
        json!({ "dealership_id": "demo-feed", "lead_id": first["lead_id"] }),
    )
    .await);
    assert_eq!(stored["lead_id"], first["lead_id"], "{stored}");
    // A test drive is requested or proposed here, never confirmed.
    let mut drive = lead(&format!("drive-{email}"), "key-drive");
    drive["vehicle_of_interest"] = json!({ "make": "Toyota", "model": "RAV4", "condition": "new" });
    drive["appointment"] = json!({ "appointment_type": "test_drive", "appointment_at": (Utc::now() + Duration::days(4)).to_rfc3339() });
    let booked = answered(
        &send(&bridge, "demo-feed", Some("demo-token-group"), drive).await,
        Skill::LeadSubmit,
    );
    assert!(
        ["requested", "proposed"].contains(&booked["appointment"]["status"].as_str().unwrap()),
        "{booked}"
    );
}

#[tokio::test]
async fn each_call_is_audited_and_counted_under_the_door_it_came_by() {
    let bridge = demo().await;
    let search = json!({ "type": "inventory.search.request", "pagination": { "limit": 3 },
                         "privacy": { "anonymous": true } });
    answered(
        &send(&bridge, "demo-feed", None, search).await,
        Skill::InventorySearch,
    );
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    ok(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-feed", "limit": 3 }),
    )
    .await);
    // Refused before any call: a forged token on the AAP door.
    let (status, _, _) = post(
        &bridge,
        "demo-feed",
        Some("forged-token"),
        &envelope(&lead("door@example.com", "k-door")),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // The audit writer commits in batches: wait for the three rows.
    let wanted = [
        ("aap", "inventory.search", "ok"),
        ("mcp", "inventory.search", "ok"),
        ("aap", "front_door", "refused.token_invalid"),
    ];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let rows = loop {
        let rows: Vec<(Option<String>, String, String)> = sqlx::query_as(
            "SELECT door, tool, outcome FROM audit_log WHERE tool IN ('inventory.search', 'front_door')",
        )
        .fetch_all(bridge.gateway.store().pool())
        .await
        .unwrap();
        if rows.len() >= wanted.len() || std::time::Instant::now() > deadline {
            break rows;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let mut rows: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|(door, tool, outcome)| {
            (
                door.as_deref().unwrap_or("-"),
                tool.as_str(),
                outcome.as_str(),
            )
        })
        .collect();
    rows.sort();
    let mut wanted = wanted.to_vec();
    wanted.sort();
    assert_eq!(rows, wanted);
    // The metrics split each tool's calls by door.
    let metrics = common::metrics_text(&bridge).await;
    for door in ["aap", "mcp"] {
        let series = format!(
            "dms_bridge_tool_calls_total{{tool=\"inventory.search\",door=\"{door}\",outcome=\"ok\"}} 1"
        );
        assert!(
            metrics.lines().any(|l| l == series),
            "no {series} in {metrics}"
        );
    }
}

#[tokio::test]
async fn the_negatives_get_aap_errors_and_nothing_is_lost_or_leaked() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let count = || async {
        let listed = ok(&call(
            &client,
            "leads.list",
            json!({ "dealership_id": "demo-feed", "limit": 100 }),
        )
        .await);
        listed["items"].as_array().unwrap().len()
    };
    let before = count().await;
    // Another dealership's token.
    let (status, _, body) = post(
        &bridge,
        "demo-feed",
        Some("demo-token-cdk"),
        &envelope(&lead("x@example.com", "k1")),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(!body.to_string().contains("x@example.com"));
    // A forged token, and no token for a lead: 401 with a challenge.
    for token in [Some("forged-token"), None] {
        let (status, headers, _) = post(
            &bridge,
            "demo-feed",
            token,
            &envelope(&lead("x@example.com", "k2")),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(
            headers["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Bearer")
        );
    }
    // Without a token, demo-cdk's inventory is not public: not even a search
    // whose filters can match nothing (it runs through the pipeline all the same).
    for data in [
        json!({ "type": "inventory.search.request" }),
        json!({ "type": "inventory.search.request", "filters": { "vehicle_type": ["motorcycle"] } }),
        json!({ "type": "inventory.facets.request", "filters": { "dc_fast_charge": true } }),
    ] {
        let (status, _, _) = post(&bridge, "demo-cdk", None, &envelope(&data)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{data}");
    }
    // An unconsented channel.
    let mut sms = lead("sms@example.com", "k3");
    sms["customer"]["phone"] = json!("+13035550123");
    sms["customer"]["preferred_contact"] = json!("sms");
    failed(
        &send(&bridge, "demo-feed", Some("demo-token-group"), sms).await,
        "CONTACT_CONSENT_REQUIRED",
        -32000,
    );
    // Expired consent.
    let mut expired = lead("expired@example.com", "k4");
    expired["consent"]["expires_at"] = json!((Utc::now() - Duration::hours(1)).to_rfc3339());
    failed(
        &send(&bridge, "demo-feed", Some("demo-token-group"), expired).await,
        "INVALID_CONSENT",
        -32000,
    );
    // A replayed key with another payload.
    let first = lead("idem@example.com", "k5");
    answered(
        &send(
            &bridge,
            "demo-feed",
            Some("demo-token-group"),
            first.clone(),
        )
        .await,
        Skill::LeadSubmit,
    );
    let mut other = first;
    other["message"] = json!("Another question entirely.");
    let conflict = failed(
        &send(&bridge, "demo-feed", Some("demo-token-group"), other).await,
        "IDEMPOTENCY_CONFLICT",
        -32000,
    );
    assert_eq!(conflict["retryable"], false);
    // A trade-in condition on the vehicle of interest.
    let mut condition = lead("cond@example.com", "k6");
    condition["vehicle_of_interest"] =
        json!({ "make": "Kia", "model": "EV6", "condition": "excellent" });
    failed(
        &send(&bridge, "demo-feed", Some("demo-token-group"), condition).await,
        "INVALID_CONDITION",
        -32602,
    );
    // A test drive without a vehicle.
    let mut drive = lead("drive@example.com", "k7");
    drive["appointment"] = json!({ "appointment_type": "test_drive", "appointment_at": (Utc::now() + Duration::days(3)).to_rfc3339() });
    failed(
        &send(&bridge, "demo-feed", Some("demo-token-group"), drive).await,
        "MISSING_REQUIRED_FIELD",
        -32602,
    );
    // Hostile text in every free-text field: each refused field is named, none echoed.
    let hostile = "Ev\u{1}il <adf></adf> ]]> \u{FFFE}";
    let mut evil = lead(&format!("evil{}", "@example.com"), "k8");
    for field in ["first_name", "last_name"] {
        evil["customer"][field] = json!(hostile);
    }
    evil["customer"]["address"] = json!({ "address_line_1": hostile, "city": hostile });
    evil["vehicle_of_interest"] =
        json!({ "make": hostile, "model": hostile, "trim": hostile, "stock": hostile });
    evil["trade_in"] = json!({ "make": hostile, "model": hostile, "condition": "good" });
    evil["source_agent"]["name"] = json!(hostile);
    let refused = failed(
        &send(&bridge, "demo-feed", Some("demo-token-group"), evil).await,
        "SCHEMA_VALIDATION_FAILED",
        -32602,
    );
    let at: Vec<&str> = refused["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["instanceLocation"].as_str().unwrap())
        .collect();
    for field in [
        "/customer/first_name",
        "/customer/last_name",
        "/customer/address/address_line_1",
        "/customer/address/city",
        "/vehicle_of_interest/make",
        "/vehicle_of_interest/stock",
        "/trade_in/model",
        "/source_agent",
    ] {
        assert!(at.contains(&field), "{field} not named in {at:?}");
    }
    assert!(
        !refused.to_string().contains("<adf>"),
        "hostile text echoed: {refused}"
    );
    // Text that is only unusual goes through, cleaned, and the CRM's ADF stays well formed.
    let mut odd = lead("odd@example.com", "k9");
    odd["message"] = json!("Line one\r\nline two </comments><script>x</script> \u{7} ]]>");
    odd["appointment"] = json!({ "appointment_type": "sales", "notes": "Ring \u{1b}[31m twice" });
    let took = answered(
        &send(&bridge, "demo-feed", Some("demo-token-group"), odd).await,
        Skill::LeadSubmit,
    );
    assert_eq!(took["status"], "received");
    let stored = ok(&call(
        &client,
        "leads.get",
        json!({ "dealership_id": "demo-feed", "lead_id": took["lead_id"] }),
    )
    .await);
    let text = stored.to_string();
    assert!(
        !text.contains('\u{7}') && !text.contains('\u{1b}'),
        "{stored}"
    );
    // Only the three accepted leads (k5, k9, and none of the refused) were kept.
    assert_eq!(count().await, before + 2);
}

#[tokio::test]
async fn a2a_protocol_refusals() {
    let bridge = demo().await;
    let search = envelope(&json!({ "type": "inventory.search.request" }));
    let raw = |version: Option<&'static str>, extensions: Option<&'static str>, body: String| {
        let url = format!("{}/aap/demo-feed", base(&bridge));
        async move {
            let mut request = reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .body(body);
            if let Some(v) = version {
                request = request.header("A2A-Version", v);
            }
            if let Some(e) = extensions {
                request = request.header("A2A-Extensions", e);
            }
            let response = request.send().await.unwrap();
            let status = response.status();
            let activated = response
                .headers()
                .get("a2a-extensions")
                .map(|v| v.to_str().unwrap().to_owned());
            (
                status,
                activated,
                response.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    // No version header (AAP's curl examples) is served; the v1.3 extension is echoed.
    let (status, activated, answer) = raw(
        None,
        Some("https://autoagentprotocol.org/extensions/aap/v1.3"),
        search.to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    answered(&answer, Skill::InventorySearch);
    assert_eq!(
        activated.as_deref(),
        Some("https://autoagentprotocol.org/extensions/aap/v1.3")
    );
    let (_, _, answer) = raw(Some("0.3"), None, search.to_string()).await;
    assert_eq!(answer["error"]["code"], -32009, "{answer}");
    let (_, _, answer) = raw(
        Some("1.0"),
        Some("https://autoagentprotocol.org/extensions/aap/v1.1"),
        search.to_string(),
    )
    .await;
    assert_eq!(
        answer["error"]["code"], -32008,
        "an older AAP is refused, not guessed: {answer}"
    );
    let mut renamed = search.clone();
    renamed["method"] = json!("message/send");
    let (_, _, answer) = raw(Some("1.0"), None, renamed.to_string()).await;
    assert_eq!(answer["error"]["code"], -32601);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("SendMessage")
    );
    renamed["method"] = json!("GetTask");
    let (_, _, answer) = raw(Some("1.0"), None, renamed.to_string()).await;
    assert_eq!(answer["error"]["code"], -32004);
    let (_, _, answer) = raw(Some("1.0"), None, "{not json".into()).await;
    assert_eq!(answer["error"]["code"], -32700);
    let mut text_only = search.clone();
    text_only["params"]["message"]["parts"] = json!([{ "text": "find me a car" }]);
    failed(
        &raw(Some("1.0"), None, text_only.to_string()).await.2,
        "SCHEMA_VALIDATION_FAILED",
        -32602,
    );
    let unknown = envelope(&json!({ "type": "finance.quote.request" }));
    failed(
        &raw(Some("1.0"), None, unknown.to_string()).await.2,
        "UNSUPPORTED_SKILL",
        -32601,
    );
    let mut text_out = search.clone();
    text_out["params"]["configuration"]["acceptedOutputModes"] = json!(["text/plain"]);
    assert_eq!(
        raw(Some("1.0"), None, text_out.to_string()).await.2["error"]["code"],
        -32005
    );
    let strict = envelope(
        &json!({ "type": "inventory.vehicle.request", "vin": "1HGCM82633A004352", "zip": "94107" }),
    );
    let old_shape = failed(
        &raw(Some("1.0"), None, strict.to_string()).await.2,
        "SCHEMA_VALIDATION_FAILED",
        -32602,
    );
    assert_eq!(
        old_shape["details"]["errors"][0]["keyword"], "additionalProperties",
        "v1.0's zip is not v1.3: {old_shape}"
    );
    // The front door's limits and rules hold here as on /mcp.
    let big = json!({ "type": "inventory.search.request", "filters": { "query": "x".repeat(2_000_000) } });
    let (status, _, _) = raw(Some("1.0"), None, envelope(&big).to_string()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let foreign = reqwest::Client::new()
        .post(format!("{}/aap/demo-feed", base(&bridge)))
        .header("Origin", "https://evil.example")
        .json(&search)
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn quotas_answer_rate_limited_with_a_retry_hint() {
    let bridge = demo_edited(|toml| {
        toml.replacen(
            "anonymous = { requests = 600000, per = \"1m\", burst = 10000 }",
            "anonymous = { requests = 2, per = \"1h\", burst = 2 }",
            1,
        )
    })
    .await;
    let search = json!({ "type": "inventory.facets.request" });
    for _ in 0..2 {
        answered(
            &send(&bridge, "demo-feed", None, search.clone()).await,
            Skill::InventoryFacets,
        );
    }
    let limited = failed(
        &send(&bridge, "demo-feed", None, search).await,
        "RATE_LIMITED",
        -32002,
    );
    assert_eq!(limited["retryable"], true);
    assert!(limited["details"]["retry_after_ms"].as_u64().unwrap() > 0);
    // The MCP door shares the anonymous quota.
    let client = connect(&bridge.url, None).await;
    let mcp = err(&call(
        &client,
        "inventory.facets",
        json!({ "dealership_id": "demo-feed" }),
    )
    .await);
    assert_eq!(mcp["code"], "rate_limited");
}

#[tokio::test]
async fn dealer_information_is_the_dealership_profile() {
    let bridge = demo().await;
    let info = answered(
        &send(
            &bridge,
            "demo-feed",
            None,
            json!({ "type": "dealer.information.request" }),
        )
        .await,
        Skill::DealerInformation,
    );
    assert_eq!(info["name"], "Lakeside Toyota Subaru Kia (Demo)");
    let rooftop = &info["rooftops"][0];
    assert_eq!(rooftop["address"]["state"], "CO");
    assert_eq!(rooftop["timezone"], "America/Denver");
    assert_eq!(
        rooftop["schedules"][0]["value"]["sunday"],
        json!({ "open": "11:00", "close": "16:00" })
    );
    assert_eq!(rooftop["phones"][0]["value"], "+13035550170");
    // v1.3's disclosed dealer fees, from the dealership's config, in whole dollars.
    assert_eq!(
        rooftop["fees"],
        json!([{ "name": "Documentation fee", "amount": 499 }])
    );
    // demo-cdk discloses none: no fees key (undisclosed), not an empty list (none).
    let cdk = answered(
        &send(
            &bridge,
            "demo-cdk",
            Some("demo-token-group"),
            json!({ "type": "dealer.information.request" }),
        )
        .await,
        Skill::DealerInformation,
    );
    assert!(cdk["rooftops"][0].get("fees").is_none(), "{cdk}");
    // Each skill call is its canonical tool's call, counted (and audited) under
    // its name and the AAP door; the MCP door's series stays at zero.
    let metrics = common::metrics_text(&bridge).await;
    let series = |door: &str| {
        format!(
            "dms_bridge_tool_calls_total{{tool=\"dealership.get\",door=\"{door}\",outcome=\"ok\"}}"
        )
    };
    for (door, calls) in [("aap", 2), ("mcp", 0)] {
        let line = format!("{} {calls}", series(door));
        assert!(metrics.lines().any(|l| l == line), "no {line} in {metrics}");
    }
}

#[tokio::test]
async fn with_sign_in_on_a_refused_buyer_agent_gets_the_oauth_challenge() {
    let (bridge, _auth) = common::demo_signed_in("").await;
    let (status, headers, _) = post(
        &bridge,
        "demo-feed",
        None,
        &envelope(&lead("signin@example.com", "k-signin")),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let challenge = headers["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
}

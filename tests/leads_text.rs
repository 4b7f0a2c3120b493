//! Text in a lead can never make the ADF document something a CRM's XML
//! parser refuses: single-line fields with control characters or
//! noncharacters are refused with a pointer, free text is cleaned, and every
//! accepted lead renders to well-formed XML 1.0 that reads back as accepted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::leads::{consent, lead, leads_config, wait_delivery};
use common::{call, connect, demo, err, ok, problem_pointers, with_config};
use dms_bridge::adf::{self, AdfLead, Interest};
use dms_bridge::contract::Principal;
use dms_bridge::gateway::{Caller, Gateway};
use dms_bridge::telemetry::trace::TraceContext;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};

/// A strict XML 1.0 parser's verdict on `document`.
fn strict(document: &str) -> Result<(), String> {
    roxmltree::Document::parse(document)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn the_strict_parser_refuses_what_xml_1_0_forbids() {
    let doc = |text: &str| {
        format!("<?xml version=\"1.0\"?>\n<?adf version=\"1.0\"?>\n<adf><n>{text}</n></adf>")
    };
    assert_eq!(strict(&doc("Dana \t\r\n é 李 😀 &amp; &#13;")), Ok(()));
    for bad in [
        "Da\u{1}na",
        "\u{1b}[0m",
        "\u{7}",
        "\u{b}",
        "\u{FFFE}",
        "\u{FFFF}",
    ] {
        assert!(strict(&doc(bad)).is_err(), "{bad:?} was accepted");
    }
}

#[tokio::test]
async fn a_name_with_a_control_character_is_refused_with_its_pointer() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let mut args = lead("demo-cdk", 1);
    args["customer"]["first_name"] = json!("Da\u{1}na");
    args["customer"]["last_name"] = json!("Whit\u{1b}field");
    args["vehicle_of_interest"]["make"] = json!("Hon\u{FFFF}da");
    args["source_agent"] = json!("agent\u{7}");
    args["dry_run"] = json!(true);
    let error = err(&call(&client, "leads.create", args).await);
    assert_eq!(error["code"], "request.invalid_arguments");
    assert_eq!(
        problem_pointers(&error),
        [
            "/customer/first_name",
            "/customer/last_name",
            "/source_agent",
            "/vehicle_of_interest/make"
        ]
    );
    let message = error["details"]["problems"][0]["message"].as_str().unwrap();
    assert!(message.contains("U+0001"), "{message}");
    assert!(
        !message.contains("Da"),
        "the value must not be echoed: {message}"
    );
}

#[tokio::test]
async fn free_text_is_cleaned_and_the_crm_gets_well_formed_xml() {
    let intake = common::leads::accepting_intake().await;
    let bridge = with_config(&leads_config(&intake.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let mut args = lead("acme", 1);
    args["message"] = json!("\u{1}Is it\u{7} still\tavailable?\u{1b}[0m\r\nCall\u{FFFE} me\r");
    args["appointment"] =
        json!({ "appointment_type": "sales", "notes": "after\u{0} 5\u{b}pm\u{FFFF}" });

    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let preview = ok(&call(&client, "leads.create", dry).await);
    let document = preview["adf_document"].as_str().unwrap();
    assert_eq!(strict(document), Ok(()), "{document}");

    let answer = ok(&call(&client, "leads.create", args).await);
    let lead_id = answer["lead_id"].as_str().unwrap();
    wait_delivery(
        &client,
        "acme",
        lead_id,
        "delivered",
        Duration::from_secs(10),
    )
    .await;
    let sent = intake.received_requests().await.unwrap();
    let body = std::str::from_utf8(&sent[0].body).unwrap();
    assert_eq!(strict(body), Ok(()), "{body}");
    let comments = adf::parse(body.as_bytes()).unwrap()[0]
        .customer
        .comments
        .clone()
        .unwrap();
    assert!(
        comments.starts_with("Is it still\tavailable?[0m\nCall me\n"),
        "{comments}"
    );
    assert!(
        comments.contains("\nAppointment notes: after 5pm\n"),
        "{comments}"
    );
}

// ------------------------------------------------------------ property

/// Characters a single-line field may hold (anything but controls and noncharacters).
fn clean_char() -> impl Strategy<Value = char> {
    prop_oneof![
        8 => prop::char::range('a', 'z'),
        2 => Just(' '),
        2 => prop::sample::select(vec![
            '&', '<', '>', '"', '\'', ']', ';', '#', '\u{a0}', '\u{2028}', '\u{3000}',
            '\u{feff}', '\u{200b}', '\u{fffd}', '\u{1fffd}', 'é', '李', '😀',
        ]),
        2 => any::<char>().prop_filter("single-line text", |c| !c.is_control() && !nonchar(*c)),
    ]
}

/// Anything at all, weighted towards what XML cannot carry.
fn any_text_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => clean_char(),
        1 => prop::sample::select(vec![
            '\u{0}', '\u{1}', '\u{7}', '\u{8}', '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{1b}',
            '\u{1f}', '\u{7f}', '\u{85}', '\u{9f}', '\u{fdd0}', '\u{fffe}', '\u{ffff}',
            '\u{1fffe}', '\u{10ffff}',
        ]),
        1 => any::<char>(),
    ]
}

fn text_of(chars: impl Strategy<Value = char>, max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(chars, 1..max).prop_map(String::from_iter)
}

fn nonchar(c: char) -> bool {
    let u = u32::from(c);
    (0xFDD0..=0xFDEF).contains(&u) || u & 0xFFFE == 0xFFFE
}

/// The free-text fields of `leads.create`, by JSON pointer, and which are
/// free text (cleaned) rather than single-line (refused when unclean).
const FIELDS: [(&str, bool); 21] = [
    ("/customer/first_name", false),
    ("/customer/last_name", false),
    ("/customer/email", false),
    ("/customer/address/address_line_1", false),
    ("/customer/address/address_line_2", false),
    ("/customer/address/city", false),
    ("/customer/address/state", false),
    ("/customer/address/zip", false),
    ("/vehicle_of_interest/stock", false),
    ("/vehicle_of_interest/make", false),
    ("/vehicle_of_interest/model", false),
    ("/vehicle_of_interest/trim", false),
    ("/vehicle_of_interest/body", false),
    ("/vehicle_of_interest/transmission", false),
    ("/trade_in/make", false),
    ("/trade_in/model", false),
    ("/trade_in/trim", false),
    ("/source_agent", false),
    ("/appointment/notes", true),
    ("/message", true),
    ("/consent/consent_text", true),
];

/// One value per field of `FIELDS`: clean text everywhere, a well-formed
/// e-mail (maybe padded), free text from anything, and then up to three
/// fields overwritten with anything at all.
fn lead_texts() -> impl Strategy<Value = Vec<String>> {
    let clean = prop::collection::vec(text_of(clean_char(), 12), FIELDS.len());
    let email = ("[ ]{0,2}", "[a-z]{1,8}", "[ \u{a0}]{0,2}")
        .prop_map(|(pre, user, post)| format!("{pre}{user}@example.com{post}"));
    let free = prop::collection::vec(text_of(any_text_char(), 40), 3);
    let dirty = prop::collection::vec((0..FIELDS.len(), text_of(any_text_char(), 12)), 0..=3);
    (clean, email, free, dirty).prop_map(|(mut texts, email, free, dirty)| {
        texts[2] = email;
        texts[18..21].clone_from_slice(&free);
        for (at, text) in dirty {
            texts[at] = text;
        }
        texts
    })
}

fn lead_args(texts: &[String]) -> Value {
    let mut args = json!({
        "dealership_id": "demo-cdk",
        "customer": { "phone": "+15125550188", "address": {} },
        "consent": consent(&["email", "phone", "sms"]),
        "vehicle_of_interest": { "year": 2021, "condition": "used" },
        "trade_in": { "year": 2015 },
        "appointment": { "appointment_type": "sales" },
        "dry_run": true
    });
    for ((pointer, _), text) in FIELDS.iter().zip(texts) {
        let (parent, name) = pointer.rsplit_once('/').unwrap();
        args.pointer_mut(parent).unwrap()[name] = json!(text);
    }
    args
}

/// What a single-line field reads back as: trimmed, absent when blank.
fn line(text: &str) -> Option<String> {
    Some(text.trim().to_owned()).filter(|t| !t.is_empty())
}

/// What free text reads back as, by the rule in TOOLSET.md (written out
/// again here rather than calling the bridge's own function).
fn free_text(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let kept: String = text
        .chars()
        .filter(|&c| matches!(c, '\t' | '\n') || !(c.is_control() || nonchar(c)))
        .collect();
    kept.trim().to_owned()
}

fn field<'a>(texts: &'a [String], pointer: &str) -> &'a str {
    let at = FIELDS.iter().position(|(p, _)| *p == pointer).unwrap();
    &texts[at]
}

/// The lead read back by the project's own lenient reader has the values accepted.
fn reads_back(texts: &[String], lead: &AdfLead) -> Result<(), TestCaseError> {
    let get = |p: &str| field(texts, p);
    let contact = &lead.customer.contact;
    prop_assert_eq!(
        contact.first_name.clone(),
        line(get("/customer/first_name"))
    );
    prop_assert_eq!(contact.last_name.clone(), line(get("/customer/last_name")));
    prop_assert_eq!(contact.email.clone(), line(get("/customer/email")));
    let address = contact.address.clone().unwrap_or_default();
    let streets: Vec<String> = ["address_line_1", "address_line_2"]
        .iter()
        .filter_map(|n| line(get(&format!("/customer/address/{n}"))))
        .collect();
    prop_assert_eq!(address.street, streets);
    prop_assert_eq!(address.city, line(get("/customer/address/city")));
    prop_assert_eq!(address.regioncode, line(get("/customer/address/state")));
    prop_assert_eq!(address.postalcode, line(get("/customer/address/zip")));
    let wanted = lead.vehicles.iter().find(|v| v.interest == Interest::Buy);
    let wanted = wanted.ok_or_else(|| TestCaseError::fail("no vehicle of interest"))?;
    prop_assert_eq!(
        wanted.stock.clone(),
        line(get("/vehicle_of_interest/stock"))
    );
    prop_assert_eq!(wanted.make.clone(), line(get("/vehicle_of_interest/make")));
    prop_assert_eq!(
        wanted.model.clone(),
        line(get("/vehicle_of_interest/model"))
    );
    prop_assert_eq!(wanted.trim.clone(), line(get("/vehicle_of_interest/trim")));
    prop_assert_eq!(
        wanted.bodystyle.clone(),
        line(get("/vehicle_of_interest/body"))
    );
    // Written as ADF's code, A or M, or left out: never the caller's text.
    prop_assert!(matches!(
        wanted.transmission.as_deref(),
        None | Some("A" | "M")
    ));
    let trade = lead
        .vehicles
        .iter()
        .find(|v| v.interest == Interest::TradeIn);
    let trade = trade.ok_or_else(|| TestCaseError::fail("no trade-in"))?;
    prop_assert_eq!(trade.make.clone(), line(get("/trade_in/make")));
    prop_assert_eq!(trade.model.clone(), line(get("/trade_in/model")));
    prop_assert_eq!(trade.trim.clone(), line(get("/trade_in/trim")));
    let provider = lead.provider.clone().unwrap_or_default();
    prop_assert_eq!(Some(provider.name), line(get("/source_agent")));
    let comments = lead.customer.comments.clone().unwrap_or_default();
    let message = free_text(get("/message"));
    if !message.is_empty() {
        prop_assert!(
            comments.starts_with(&format!("{message}\n")),
            "message {:?} not first in {:?}",
            message,
            comments
        );
    }
    let notes = free_text(get("/appointment/notes"));
    if !notes.is_empty() {
        let line = format!("\nAppointment notes: {notes}");
        prop_assert!(
            comments.ends_with(&line) || comments.contains(&format!("{line}\n")),
            "notes {:?} not in {:?}",
            notes,
            comments
        );
    }
    Ok(())
}

async fn create(
    gateway: &Gateway,
    principal: &Arc<Principal>,
    args: Value,
) -> Result<Value, String> {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    let caller = Caller {
        principal: principal.clone(),
        client_ip: None,
        trace: TraceContext::generate(),
        door: dms_bridge::telemetry::door::Door::Mcp,
        progress: None,
        log: None,
    };
    let outcome = gateway
        .call_tool(&caller, "leads.create", Some(map))
        .await
        .unwrap();
    match outcome.result {
        Ok(payload) => Ok(payload.value().clone()),
        Err(e) => Err(e.code.as_str().to_owned()),
    }
}

/// Every lead the bridge accepts, whatever Unicode its text fields hold,
/// renders to a document a strict XML 1.0 parser accepts, and the lenient
/// ADF reader reads back the values that were accepted. Dry runs through the
/// whole pipeline (schema, validation, the handler) in process: the MCP
/// transport adds nothing here and is covered by the tests above.
#[test]
fn every_accepted_lead_is_well_formed_adf_that_reads_back() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The bridge's parts (its SMTP pool) must be dropped inside the runtime.
    let _inside = runtime.enter();
    let bridge = runtime.block_on(demo());
    let gateway = bridge.gateway.clone();
    let principal = gateway
        .authenticator()
        .authenticate("demo-token-cdk")
        .unwrap();
    // About 40 % are accepted: some 80 documents checked in a few seconds.
    let cases = 200;
    let accepted = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&lead_texts(), |texts| {
        let answer = runtime.block_on(create(&gateway, &principal, lead_args(&texts)));
        let answer = match answer {
            Ok(answer) => answer,
            // A blank consent_text is an invalid grant; anything else refused is an argument.
            Err(code) if code == "leads.invalid_consent" => {
                prop_assert!(field(&texts, "/consent/consent_text").trim().is_empty());
                return Ok(());
            }
            Err(code) => {
                prop_assert_eq!(code, "request.invalid_arguments");
                return Ok(());
            }
        };
        accepted.fetch_add(1, Ordering::Relaxed);
        let document = answer["adf_document"].as_str().unwrap_or_default();
        prop_assert_eq!(strict(document), Ok(()), "{}", document);
        let read =
            adf::parse(document.as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(read.len(), 1);
        reads_back(&texts, &read[0])
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    let accepted = accepted.into_inner();
    // Half the cases or so carry no unclean single-line field; far fewer
    // accepted would mean the property was hardly exercised.
    assert!(
        accepted * 5 > cases as usize,
        "only {accepted} of {cases} accepted"
    );
    drop((gateway, bridge));
}

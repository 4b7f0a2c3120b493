//! The faker on the project's own fixtures: no customer's name, e-mail
//! address or phone number survives, the vehicle data does, and the result
//! still parses into the same shape.

use serde_json::Value;

use super::*;
use crate::adapters::soap::xml::to_json;

fn faker() -> Faker {
    Faker::with_key([42; 32])
}

fn fixture(path: &str) -> Vec<u8> {
    let root = env!("CARGO_MANIFEST_DIR");
    std::fs::read(format!("{root}/wiremock-fixtures/{path}")).unwrap()
}

/// The fixtures' customers and service writers, as the fixtures spell them.
const PEOPLE: &[&str] = &[
    "Adeyemi",
    "Chen",
    "Dana",
    "Fischer",
    "Grace",
    "Lindqvist",
    "Luis",
    "Mei",
    "Moreno",
    "Noah",
    "Okafor",
    "Ortega",
    "Whitfield",
    "Pecan",
    "Elm St",
];

fn assert_no_person(text: &str) {
    let lower = text.to_lowercase();
    for who in PEOPLE {
        assert!(!lower.contains(&who.to_lowercase()), "{who} survived");
    }
    // The fixtures' e-mail addresses and phone numbers (+1512555 01xx).
    for (at, _) in lower.match_indices("@example.com") {
        let local = &lower[..at].rsplit(['"', '>', ' ']).next().unwrap();
        assert!(
            !PEOPLE.iter().any(|p| local.contains(&p.to_lowercase())),
            "{local}"
        );
    }
    assert!(!text.contains("5125550"), "a real phone number survived");
}

/// Same keys, same array lengths, same types; string leaves equal unless
/// the faker owns their key.
fn same_shape(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(
                x.keys().collect::<Vec<_>>(),
                y.keys().collect::<Vec<_>>(),
                "{at}"
            );
            for (k, v) in x {
                same_shape(v, &y[k], &format!("{at}/{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                same_shape(v, w, &format!("{at}/{i}"));
            }
        }
        (Value::String(_), Value::String(_)) => {}
        (x, y) => assert_eq!(x, y, "{at}"),
    }
}

fn scrubbed(format: Format, path: &str, fixture_path: &str) -> (Vec<u8>, Vec<u8>) {
    let original = fixture(fixture_path);
    let out = scrub_body(&faker(), format, &original, path);
    assert_eq!(out.warning, None, "{fixture_path}");
    (original, out.body)
}

#[test]
fn tekion_repair_orders_lose_their_customers_and_keep_their_vehicles() {
    for page in [
        "tekion/repair-orders-page-1.json",
        "tekion/repair-orders-page-2.json",
        "tekion/repair-order-60102.json",
    ] {
        let (original, faked) = scrubbed(Format::Json, "/openapi/v3.1.0/repair-orders", page);
        let (a, b): (Value, Value) = (
            serde_json::from_slice(&original).unwrap(),
            serde_json::from_slice(&faked).unwrap(),
        );
        same_shape(&a, &b, page);
        assert_no_person(&String::from_utf8(faked).unwrap());
        for (ra, rb) in a["data"]
            .as_array()
            .unwrap()
            .iter()
            .zip(b["data"].as_array().unwrap())
        {
            assert_eq!(ra["vehicle"], rb["vehicle"], "the vehicle stays");
            assert_eq!(ra["jobs"], rb["jobs"]);
            assert_eq!(ra["repairOrderNumber"], rb["repairOrderNumber"]);
            assert_ne!(ra["customer"]["firstName"], rb["customer"]["firstName"]);
            assert!(
                rb["customer"]["email"]
                    .as_str()
                    .unwrap()
                    .ends_with("@example.com")
            );
            let phone = rb["customer"]["phones"][0]["number"].as_str().unwrap();
            assert!(phone.starts_with("+1555555"), "{phone}");
            assert_eq!(
                ra["customer"]["phones"][0]["phoneType"],
                rb["customer"]["phones"][0]["phoneType"]
            );
        }
    }
}

#[test]
fn one_customer_is_one_fake_customer_across_answers() {
    let faked = |path| -> Value {
        let (_, body) = scrubbed(Format::Json, "/x", path);
        serde_json::from_slice(&body).unwrap()
    };
    let page = faked("tekion/repair-orders-page-1.json");
    let single = faked("tekion/repair-order-60102.json");
    let in_page = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["repairOrderNumber"] == "60102")
        .unwrap();
    assert_eq!(in_page["customer"], single["data"][0]["customer"]);
}

#[test]
fn opentrack_soap_answers_stay_well_formed_soap_without_customers() {
    for file in [
        "repair-order-details-60080.xml",
        "repair-order-details-60095.xml",
        "closed-repair-orders-20261105.xml",
        "closed-repair-orders-20261114.xml",
    ] {
        let (original, faked) = scrubbed(
            Format::Xml,
            "/serviceapi.asmx",
            &format!("opentrack/{file}"),
        );
        let (a, b) = (to_json(&original).unwrap(), to_json(&faked).unwrap());
        same_shape(&a, &b, file);
        let text = String::from_utf8(faked).unwrap();
        assert_no_person(&text);
        assert!(
            text.starts_with("<?xml") && text.contains("<soap:Envelope xmlns:soap="),
            "prefixes kept"
        );
        let ro = |v: &Value| v["Envelope"]["Body"].to_string();
        for vehicle in ["VIN", "Make", "Model", "RepairOrderNumber", "LaborDetails"] {
            assert_eq!(ro(&a).contains(vehicle), ro(&b).contains(vehicle));
        }
        let vins = |t: &str| t.matches("<VIN>").count();
        assert_eq!(vins(&text), vins(&String::from_utf8_lossy(&original)));
    }
    // The fake keeps "LAST, FIRST", which the OpenTrack mapping reads for initials.
    let (_, faked) = scrubbed(Format::Xml, "/", "opentrack/repair-order-details-60080.xml");
    let doc = to_json(&faked).unwrap();
    let name = doc["Envelope"]["Body"]["GetClosedRepairOrderDetailsResponse"]["GetClosedRepairOrderDetailsResult"]["RepairOrder"]["CustomerName"].as_str().unwrap().to_owned();
    assert!(name.contains(", ") && name == name.to_uppercase(), "{name}");
    assert_eq!(
        doc["Envelope"]["Body"]["GetClosedRepairOrderDetailsResponse"]["GetClosedRepairOrderDetailsResult"]
            ["RepairOrder"]["VIN"],
        "2HGFC2F56KH512345"
    );
}

#[test]
fn cdk_repair_orders_and_inventory() {
    for file in [
        "cdk/repair-orders/result-closed.json",
        "cdk/repair-orders/result-open.json",
    ] {
        let (original, faked) = scrubbed(Format::Json, "/cdk/service/repair-orders", file);
        same_shape(
            &serde_json::from_slice(&original).unwrap(),
            &serde_json::from_slice(&faked).unwrap(),
            file,
        );
        assert_no_person(&String::from_utf8(faked).unwrap());
    }
    // A dealer's stock is not a customer: colour names and all stay.
    let (original, faked) = scrubbed(
        Format::Json,
        "/cdk/sales/inventory/v2/merchandisable-vehicles/",
        "cdk/merchandisable-vehicles.json",
    );
    let (a, b): (Value, Value) = (
        serde_json::from_slice(&original).unwrap(),
        serde_json::from_slice(&faked).unwrap(),
    );
    assert_eq!(a, b);
}

#[test]
fn feeds_keep_their_stock_and_the_dealerships_address() {
    let (original, faked) = scrubbed(
        Format::Csv,
        "/feeds/homenet-inventory.csv",
        "feed/homenet-inventory.csv",
    );
    assert_eq!(
        String::from_utf8(original)
            .unwrap()
            .replace("\r\n", "\n")
            .trim_end()
            .lines()
            .count(),
        String::from_utf8(faked.clone())
            .unwrap()
            .trim_end()
            .lines()
            .count()
    );
    let (a, b) = (
        csv_rows(&fixture("feed/homenet-inventory.csv"), b','),
        csv_rows(&faked, b','),
    );
    assert_eq!(a, b);
    let tsv = fixture("feed/google-vehicle-listings.tsv");
    let out = scrub_body(&faker(), Format::Tsv, &tsv, "/feeds/google.tsv");
    assert_eq!(csv_rows(&tsv, b'\t'), csv_rows(&out.body, b'\t'));
}

fn csv_rows(body: &[u8], delimiter: u8) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .from_reader(body)
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect()
}

#[test]
fn credentials_are_redacted_in_every_shape() {
    let f = faker();
    let token = scrub_body(
        &f,
        Format::Json,
        &fixture("tekion/token.json"),
        "/openapi/public/tokens",
    );
    let token: Value = serde_json::from_slice(&token.body).unwrap();
    assert_eq!(token["data"]["access_token"], REDACTED);
    assert_eq!(token["data"]["token_type"], "Bearer");
    let form = scrub_body(&f, Format::Form, b"grant_type=client_credentials&client_id=app&client_secret=s3cret&secret_key=k3y&password=pw", "/token");
    let form = String::from_utf8(form.body).unwrap();
    assert_eq!(
        form,
        "grant_type=client_credentials&client_id=app&client_secret=REDACTED&secret_key=REDACTED&password=REDACTED"
    );
    let soap = br#"<s:Envelope xmlns:s="x" xmlns:wsse="y"><s:Header><wsse:Security><wsse:UsernameToken><wsse:Username>ot-user</wsse:Username><wsse:Password Type="t#PasswordText">ot-pass</wsse:Password></wsse:UsernameToken></wsse:Security></s:Header><s:Body><Get a="1"/></s:Body></s:Envelope>"#;
    let out = String::from_utf8(scrub_body(&f, Format::Xml, soap, "/svc").body).unwrap();
    assert!(
        !out.contains("ot-pass") && !out.contains("ot-user"),
        "{out}"
    );
    assert!(
        out.contains(r#"<wsse:Password Type="t#PasswordText">REDACTED</wsse:Password>"#),
        "{out}"
    );
    let query = scrub_query(
        &f,
        &[("api_key".into(), "k".into()), ("vin".into(), "1FT".into())],
        "/x",
    );
    assert_eq!(
        query,
        [
            ("api_key".to_owned(), REDACTED.to_owned()),
            ("vin".to_owned(), "1FT".to_owned())
        ]
    );
    for header in [
        "Authorization",
        "X-API-Key",
        "Cookie",
        "Ocp-Apim-Subscription-Key",
        "X-Signature",
    ] {
        assert!(!keep_header(header), "{header}");
    }
    for header in [
        "Content-Type",
        "SOAPAction",
        "app_id",
        "dealer_id",
        "Accept",
    ] {
        assert!(keep_header(header), "{header}");
    }
}

#[test]
fn an_unreadable_body_still_loses_emails_and_phones() {
    let out = scrub_body(
        &faker(),
        Format::Json,
        b"{\"email\": \"dana@example.com\", \"phone\": \"+15125550101\"",
        "/",
    );
    assert!(out.warning.is_some());
    let text = String::from_utf8(out.body).unwrap();
    assert!(
        !text.contains("dana@") && !text.contains("5125550101"),
        "{text}"
    );
}

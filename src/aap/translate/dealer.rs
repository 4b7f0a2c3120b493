//! `dealer.information` from the canonical `dealership.get`: the dealership
//! is one AAP rooftop.

use serde_json::{Map, Value, json};

use super::vehicle::{is_web_uri, whole_dollars};
use crate::model::Money;
use crate::model::dealership::opening_span;

const DAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// AAP's `DealerInformation` for the canonical profile.
pub fn answer(profile: &Value) -> Value {
    let mut rooftop = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value.filter(|v| !v.is_null()) {
            rooftop.insert(key.to_owned(), value);
        }
    };
    put("name", Some(profile["name"].clone()));
    put("legal_name", profile.get("legal_name").cloned());
    // AAP's `format: uri`: a website the config gives without its scheme is left out.
    put(
        "website",
        profile["website"]
            .as_str()
            .filter(|w| is_web_uri(w))
            .map(Value::from),
    );
    put(
        "geo",
        profile
            .get("geo")
            .map(|g| json!({ "latitude": g["latitude"], "longitude": g["longitude"] })),
    );
    let phones: Vec<Value> = list(profile, "phones")
        .map(|p| json!({ "name": p["name"], "value": p["number"] }))
        .collect();
    put("phones", (!phones.is_empty()).then(|| json!(phones)));
    put("address", Some(address(&profile["address"])));
    let schedules: Vec<Value> = list(profile, "hours")
        .map(|h| json!({ "name": h["department"], "value": weekly(&h["weekly"]) }))
        .collect();
    put(
        "schedules",
        (!schedules.is_empty()).then(|| json!(schedules)),
    );
    put("timezone", profile.get("timezone").cloned());
    put("capabilities", profile.get("capabilities").cloned());
    put("fees", profile.get("fees").and_then(fees));
    json!({ "name": profile["name"], "rooftops": [Value::Object(rooftop)] })
}

/// The dealership's fees in whole dollars (`[]` stays `[]`: none, as
/// disclosed). AAP reads the list as complete, so a fee with no AAP form
/// (another currency) leaves the whole list out: undisclosed.
fn fees(canonical: &Value) -> Option<Value> {
    let fees: Option<Vec<Value>> = canonical
        .as_array()?
        .iter()
        .map(|fee| {
            let money = serde_json::from_value::<Money>(fee["amount"].clone()).ok()?;
            Some(json!({ "name": fee["name"], "amount": whole_dollars(&money)? }))
        })
        .collect();
    fees.map(Value::from)
}

fn list<'a>(profile: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    profile[key].as_array().into_iter().flatten()
}

fn address(canonical: &Value) -> Value {
    let mut out = Map::new();
    for (from, to) in [
        ("line1", "address_line_1"),
        ("line2", "address_line_2"),
        ("city", "city"),
        ("region", "state"),
        ("postal_code", "zip"),
        ("country", "country"),
    ] {
        if let Some(text) = canonical[from].as_str() {
            out.insert(to.into(), json!(text));
        }
    }
    Value::Object(out)
}

/// `"09:00-20:00"` per day as AAP's `{open, close}` (two-digit hours, as AAP's
/// pattern wants; the config also takes `9:00`), and `null` for a day closed.
fn weekly(canonical: &Value) -> Value {
    let mut out = Map::new();
    for day in DAYS {
        let hours = canonical[day]
            .as_str()
            .and_then(opening_span)
            .map(|(open, close)| {
                json!({ "open": open.format("%H:%M").to_string(), "close": close.format("%H:%M").to_string() })
            });
        out.insert(day.into(), hours.unwrap_or(Value::Null));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_website_without_its_scheme_is_left_out_and_fees_stay_complete() {
        let profile = |website: &str, fees: Value| {
            json!({ "name": "Acme", "address": { "line1": "1 Main", "city": "Austin", "region": "TX", "postal_code": "78701", "country": "US" },
                    "website": website, "fees": fees })
        };
        let usd = json!([{ "name": "Doc", "amount": { "amount": 49950, "currency": "USD" } }]);
        let info = answer(&profile("www.acme.example", usd.clone()));
        assert!(info["rooftops"][0].get("website").is_none(), "{info}");
        assert_eq!(
            info["rooftops"][0]["fees"],
            json!([{ "name": "Doc", "amount": 500 }])
        );
        let info = answer(&profile("https://www.acme.example", json!([])));
        assert_eq!(info["rooftops"][0]["website"], "https://www.acme.example");
        assert_eq!(info["rooftops"][0]["fees"], json!([]), "[] says none");
        let mixed = json!([{ "name": "Doc", "amount": { "amount": 100, "currency": "USD" } },
                           { "name": "Levy", "amount": { "amount": 100, "currency": "CAD" } }]);
        let info = answer(&profile("https://www.acme.example", mixed));
        assert!(
            info["rooftops"][0].get("fees").is_none(),
            "a partial list is not a complete one: {info}"
        );
    }

    #[test]
    fn closed_days_are_null() {
        let week = weekly(&json!({ "monday": "09:00-18:00", "tuesday": "9:00-17:30" }));
        assert_eq!(week["monday"], json!({ "open": "09:00", "close": "18:00" }));
        // The config takes a one-digit hour; AAP's pattern wants two.
        assert_eq!(
            week["tuesday"],
            json!({ "open": "09:00", "close": "17:30" })
        );
        assert_eq!(week["sunday"], Value::Null);
    }
}

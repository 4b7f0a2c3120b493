//! Service helpers for the demo's `demo-cdk` (Xtime mock): open slots on the
//! next weekday, a valid booking and a cancellation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{Datelike, Duration, Utc, Weekday};
use serde_json::{Value, json};

use super::{Client, call, ok};

/// A consent grant given a minute ago, by e-mail, for `scope`.
pub fn consent(scope: &str) -> Value {
    json!({
        "granted_at": (Utc::now() - Duration::minutes(1)).to_rfc3339(),
        "allowed_channels": ["email"],
        "scope": [scope],
        "consent_text": "I agree that Riverside Auto Group may email me about this request."
    })
}

/// The next weekday, in the demo's calendar (America/Chicago).
pub fn next_weekday() -> String {
    let mut day = Utc::now()
        .with_timezone(&chrono_tz::America::Chicago)
        .date_naive();
    loop {
        day += Duration::days(1);
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            return day.to_string();
        }
    }
}

/// Open starts at demo-cdk on the next weekday.
pub async fn open_starts(client: &Client) -> Vec<String> {
    let day = next_weekday();
    let answer = ok(&call(
        client,
        "service.check_availability",
        json!({ "dealership_id": "demo-cdk", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
                "from": day, "to": day }),
    )
    .await);
    answer["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["start"].as_str().unwrap().to_owned())
        .collect()
}

/// `service.book_appointment` arguments for an oil change at `start`.
pub fn booking(start: &str) -> Value {
    json!({
        "dealership_id": "demo-cdk", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
        "start": start,
        "customer": { "first_name": "Dana", "last_name": "Whitfield", "email": "dana@example.com" },
        "consent": consent("service_appointment")
    })
}

/// `service.cancel_appointment` arguments for `id`.
pub fn cancel(id: &str) -> Value {
    json!({ "dealership_id": "demo-cdk", "appointment_id": id })
}

/// An Xtime upstream on the testkit's mock scheduler at `base_url` (its
/// credentials, API key and dealer code), with a 2 s timeout.
pub fn mock_xtime_upstream(base_url: &str) -> super::config::Upstream {
    use super::config::{quoted, secret};
    use dms_bridge_testkit::mock_xtime;
    super::config::Upstream::rest("xtime", base_url)
        .set("token_url", quoted(&format!("{base_url}/oauth2/token")))
        .set("client_id", secret(mock_xtime::CLIENT_ID))
        .set("client_secret", secret(mock_xtime::CLIENT_SECRET))
        .set(
            "secrets",
            format!("{{ api_key = {} }}", secret(mock_xtime::API_KEY)),
        )
        .set(
            "vars",
            format!("{{ dealer_code = {} }}", quoted(mock_xtime::DEALER_CODE)),
        )
        .timeout("2s")
}

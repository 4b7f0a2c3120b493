//! A stored lead as the named values a CRM API's JSON body is written from
//! (the REST kind's `LEAD_PARAMS`). A value the lead does not have is empty,
//! and the body template leaves it out.

use std::collections::BTreeMap;

use super::lead::Lead;
use crate::adapters::rest::leads::national_number;

/// The values of `lead` (the bridge's `lead_id`) by parameter name.
pub fn fields(lead_id: &str, lead: &Lead) -> BTreeMap<String, String> {
    let text = |v: Option<&String>| v.cloned().unwrap_or_default();
    let wire = |v: Option<serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => s,
        _ => String::new(),
    };
    let c = &lead.customer;
    let address = c.address.clone().unwrap_or_default();
    let line = [&address.address_line_1, &address.address_line_2]
        .into_iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let vehicle = lead.vehicle_of_interest.as_ref();
    let trade = lead.trade_in.as_ref();
    let year = |y: Option<u16>| y.map(|y| y.to_string()).unwrap_or_default();
    BTreeMap::from([
        ("lead_id", lead_id.to_owned()),
        ("first_name", c.first_name.clone()),
        ("last_name", c.last_name.clone()),
        ("email", text(c.email.as_ref())),
        ("phone", text(c.phone.as_ref())),
        ("phone_national", national_number(c.phone.as_deref())),
        (
            "preferred_contact",
            wire(
                c.preferred_contact
                    .and_then(|p| serde_json::to_value(p).ok()),
            ),
        ),
        ("address_line", line),
        ("city", text(address.city.as_ref())),
        ("state", text(address.state.as_ref())),
        ("zip", text(address.zip.as_ref())),
        ("comment", text(lead.message.as_ref())),
        ("source_agent", lead.source_agent.clone()),
        (
            "vehicle_condition",
            wire(vehicle.and_then(|v| v.condition.and_then(|c| serde_json::to_value(c).ok()))),
        ),
        ("vehicle_year", year(vehicle.and_then(|v| v.year))),
        ("vehicle_make", text(vehicle.and_then(|v| v.make.as_ref()))),
        (
            "vehicle_model",
            text(vehicle.and_then(|v| v.model.as_ref())),
        ),
        ("vehicle_trim", text(vehicle.and_then(|v| v.trim.as_ref()))),
        ("vehicle_vin", text(vehicle.and_then(|v| v.vin.as_ref()))),
        (
            "vehicle_stock",
            text(vehicle.and_then(|v| v.stock.as_ref())),
        ),
        ("trade_year", year(trade.and_then(|t| t.year))),
        ("trade_make", text(trade.and_then(|t| t.make.as_ref()))),
        ("trade_model", text(trade.and_then(|t| t.model.as_ref()))),
        ("trade_vin", text(trade.and_then(|t| t.vin.as_ref()))),
    ])
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::rest::leads::LEAD_PARAMS;

    #[test]
    fn every_parameter_the_profiles_may_use_is_filled() {
        let lead: Lead = serde_json::from_value(serde_json::json!({
            "customer": { "first_name": "Ana", "last_name": "Diaz", "phone": "+15125550188" },
            "source_agent": "test"
        }))
        .unwrap();
        let fields = fields("lead_1", &lead);
        let names: Vec<&str> = fields.keys().map(String::as_str).collect();
        let mut expected = LEAD_PARAMS.to_vec();
        expected.sort_unstable();
        assert_eq!(names, expected);
        assert_eq!(fields["phone_national"], "5125550188");
        assert_eq!(fields["email"], "");
        assert_eq!(fields["vehicle_make"], "");
    }
}

//! A canonical vehicle as AAP v1.3 lists it.

use chrono::SecondsFormat;
use serde_json::{Map, Value, json};

use crate::model::{Money, Vehicle, VehicleStatus};

/// AAP's `status` for a unit for sale (sold units never reach this door).
pub fn status(status: VehicleStatus) -> &'static str {
    match status {
        VehicleStatus::Available => "available",
        VehicleStatus::InTransit => "intransit",
        VehicleStatus::Pending => "pending",
    }
}

/// Whole US dollars, as AAP carries prices. Cents round up, so the price a
/// buyer's agent reads is never below the dealer's; another currency has no
/// AAP form and the price is left out.
pub fn whole_dollars(money: &Money) -> Option<i64> {
    (money.currency == "USD")
        .then(|| money.amount.div_euclid(100) + i64::from(money.amount.rem_euclid(100) > 0))
}

/// The AAP vehicle for one canonical vehicle. `rooftop` is the dealership's name.
pub fn to_aap(v: &Vehicle, rooftop: &str) -> Value {
    let mut out = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            out.insert(key.to_owned(), value);
        }
    };
    let text = |s: &Option<String>| s.as_ref().map(|s| json!(s));
    put("vehicle_id", Some(json!(v.id)));
    put("dealer_id", Some(json!(v.dealership_id)));
    put("rooftop", Some(json!(rooftop)));
    put("vin", text(&v.vin));
    put("stock", text(&v.stock));
    put("status", Some(json!(status(v.status))));
    put("condition", Some(json!(v.condition)));
    put("year", v.year.map(|y| json!(y)));
    put("make", text(&v.make));
    put("model", text(&v.model));
    put("trim", text(&v.trim));
    put("body", text(&v.body));
    put("fuel", text(&v.fuel));
    put("transmission", text(&v.transmission));
    put("driveline", text(&v.drivetrain));
    put("engine", text(&v.engine));
    put("exterior_color", text(&v.exterior_color));
    put("interior_color", text(&v.interior_color));
    put("mileage", v.mileage.map(|m| json!(m.in_miles())));
    let dollars = |m: &Option<Money>| m.as_ref().and_then(whole_dollars).map(|d| json!(d));
    put("price", dollars(&v.price));
    put("list_price", dollars(&v.list_price));
    put("msrp", dollars(&v.msrp));
    let photos: Vec<&str> = v.photos.iter().filter(|p| is_uri(p)).collect();
    put("photos", (!photos.is_empty()).then(|| json!(photos)));
    put(
        "vdp_url",
        v.vdp_url.as_deref().filter(|u| is_uri(u)).map(|u| json!(u)),
    );
    put("description", text(&v.description));
    put(
        "inventory_date",
        v.inventory_date.map(|d| json!(d.to_string())),
    );
    put(
        "updated_at",
        Some(json!(
            v.last_verified_at
                .to_rfc3339_opts(SecondsFormat::Secs, true)
        )),
    );
    let mut other = Map::new();
    if let Some(doors) = v.doors {
        other.insert("doors".into(), json!(doors));
    }
    if let Some(days) = v.days_in_stock {
        other.insert("days_in_stock".into(), json!(days));
    }
    put(
        "other_attributes",
        (!other.is_empty()).then_some(Value::Object(other)),
    );
    Value::Object(out)
}

fn is_uri(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_round_up_and_other_currencies_have_none() {
        let usd = |amount| Money {
            amount,
            currency: "USD".into(),
        };
        assert_eq!(whole_dollars(&usd(2_499_500)), Some(24_995));
        assert_eq!(whole_dollars(&usd(2_499_501)), Some(24_996));
        assert_eq!(
            whole_dollars(&Money {
                amount: 100,
                currency: "CAD".into()
            }),
            None
        );
    }
}

//! A canonical vehicle as AAP v1.3 lists it.

use chrono::SecondsFormat;
use serde::Serialize;

use crate::model::{Condition, Money, Vehicle, VehicleStatus};

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

/// AAP's vehicle, borrowing the canonical one's text.
#[derive(Debug, Serialize)]
pub struct AapVehicle<'a> {
    vehicle_id: &'a str,
    dealer_id: &'a str,
    rooftop: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    vin: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stock: Option<&'a str>,
    status: &'static str,
    condition: Condition,
    #[serde(skip_serializing_if = "Option::is_none")]
    year: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    make: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trim: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fuel: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    transmission: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    driveline: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    engine: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exterior_color: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interior_color: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mileage: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    price: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    list_price: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    msrp: Option<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    photos: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vdp_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inventory_date: Option<String>,
    updated_at: String,
    #[serde(skip_serializing_if = "OtherAttributes::is_empty")]
    other_attributes: OtherAttributes,
}

/// Canonical fields AAP has no name for.
#[derive(Debug, Default, Serialize)]
struct OtherAttributes {
    #[serde(skip_serializing_if = "Option::is_none")]
    doors: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    days_in_stock: Option<u32>,
}

impl OtherAttributes {
    fn is_empty(&self) -> bool {
        self.doors.is_none() && self.days_in_stock.is_none()
    }
}

/// The AAP vehicle for one canonical vehicle. `rooftop` is the dealership's name.
pub fn to_aap<'a>(v: &'a Vehicle, rooftop: &'a str) -> AapVehicle<'a> {
    let dollars = |m: &Option<Money>| m.as_ref().and_then(whole_dollars);
    AapVehicle {
        vehicle_id: &v.id,
        dealer_id: &v.dealership_id,
        rooftop,
        vin: v.vin.as_deref(),
        stock: v.stock.as_deref(),
        status: status(v.status),
        condition: v.condition,
        year: v.year,
        make: v.make.as_deref(),
        model: v.model.as_deref(),
        trim: v.trim.as_deref(),
        body: v.body.as_deref(),
        fuel: v.fuel.as_deref(),
        transmission: v.transmission.as_deref(),
        driveline: v.drivetrain.as_deref(),
        engine: v.engine.as_deref(),
        exterior_color: v.exterior_color.as_deref(),
        interior_color: v.interior_color.as_deref(),
        mileage: v.mileage.map(|m| m.in_miles()),
        price: dollars(&v.price),
        list_price: dollars(&v.list_price),
        msrp: dollars(&v.msrp),
        photos: v.photos.iter().filter(|p| is_web_uri(p)).collect(),
        vdp_url: v.vdp_url.as_deref().filter(|u| is_web_uri(u)),
        description: v.description.as_deref(),
        inventory_date: v.inventory_date.map(|d| d.to_string()),
        updated_at: v
            .last_verified_at
            .to_rfc3339_opts(SecondsFormat::Secs, true),
        other_attributes: OtherAttributes {
            doors: v.doors,
            days_in_stock: v.days_in_stock,
        },
    }
}

/// An absolute http(s) URI as AAP's `format: uri` reads it: a scheme, a host,
/// and no character a URI cannot hold (space, quote, angle brackets, …).
pub fn is_web_uri(text: &str) -> bool {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"));
    rest.is_some_and(|r| {
        !r.is_empty()
            && !r.starts_with('/')
            && r.bytes()
                .all(|b| b.is_ascii_graphic() && !b"\"<>\\^`{|}".contains(&b))
    })
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

    #[test]
    fn only_web_uris_are_listed() {
        assert!(is_web_uri("https://images.example/a/1.jpg?w=640"));
        assert!(!is_web_uri("https://images.example/a b.jpg"));
        assert!(!is_web_uri("ftp://images.example/a.jpg"));
        assert!(!is_web_uri("https:///a.jpg"));
        assert!(!is_web_uri("/photos/1.jpg"));
    }
}

//! `<vehicle>` as sent by real lead providers: wrong case, wrong attribute
//! names, thousands separators, alternative element names.

use super::extras::{Extras, set_once};
use super::model::{AdfVehicle, Interest, Odometer, OdometerUnits, Price, VehicleStatus};
use super::tree::Element;

pub(super) fn read_vehicle(vehicle: &Element, extras: &mut Extras) -> AdfVehicle {
    let mut read = AdfVehicle {
        interest: interest(vehicle.attr("interest")),
        status: status(vehicle.attr("status")),
        ..AdfVehicle::default()
    };
    for child in &vehicle.children {
        let value = child.value();
        match child.name.as_str() {
            "year" if read.year.is_none() => read.year = year(child, extras),
            "make" => set_once(&mut read.make, value),
            "model" => set_once(&mut read.model, value),
            "vin" => set_once(&mut read.vin, value),
            "stock" | "stocknumber" => set_once(&mut read.stock, value),
            "trim" => set_once(&mut read.trim, value),
            "bodystyle" => set_once(&mut read.bodystyle, value),
            "transmission" => set_once(&mut read.transmission, value),
            "odometer" if read.odometer.is_none() => read.odometer = odometer(child, extras),
            "condition" => set_once(&mut read.condition, value),
            "price" if read.price.is_none() => read.price = price(child),
            "comments" => set_once(&mut read.comments, value),
            _ => extras.add("vehicle", child),
        }
    }
    read
}

/// Missing means `buy` (the ADF default); separators and case vary
/// (`trade-in`, `TradeIn`, `trade_in`).
fn interest(raw: Option<&str>) -> Interest {
    let Some(raw) = raw else {
        return Interest::Buy;
    };
    let lower = raw.to_lowercase();
    let compact: String = lower
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .collect();
    match compact.as_str() {
        "buy" => Interest::Buy,
        "lease" => Interest::Lease,
        "sell" => Interest::Sell,
        "tradein" => Interest::TradeIn,
        "testdrive" => Interest::TestDrive,
        _ => Interest::Other(lower),
    }
}

/// Missing or unknown means `new` (the ADF default); certified pre-owned is used.
fn status(raw: Option<&str>) -> VehicleStatus {
    let lower = raw.unwrap_or_default().to_lowercase();
    match lower.as_str() {
        "used" | "certified" | "cpo" | "preowned" | "pre-owned" => VehicleStatus::Used,
        _ => VehicleStatus::New,
    }
}

/// A year that is not a number is kept as text in `extras`.
fn year(element: &Element, extras: &mut Extras) -> Option<u16> {
    let text = element.value()?;
    let year = text.parse().ok();
    if year.is_none() {
        extras.push("vehicle/year".to_owned(), text);
    }
    year
}

/// `114,000`, `114 000`, `114000 mi`; units from `units` or the misspelt
/// `unit`, else from the text, else miles (US dealers).
fn odometer(element: &Element, extras: &mut Extras) -> Option<Odometer> {
    let text = element.value()?;
    let number_end = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, ',' | ' ')))
        .unwrap_or(text.len());
    let (number, rest) = text.split_at(number_end);
    let digits: String = number.chars().filter(char::is_ascii_digit).collect();
    let Ok(value) = digits.parse() else {
        extras.push("vehicle/odometer".to_owned(), text);
        return None;
    };
    let units = element
        .attr("units")
        .or_else(|| element.attr("unit"))
        .and_then(units)
        .or_else(|| units(rest))
        .unwrap_or_default();
    Some(Odometer { value, units })
}

fn units(raw: &str) -> Option<OdometerUnits> {
    let lower = raw.trim().trim_end_matches('.').to_lowercase();
    match lower.as_str() {
        "mi" | "mile" | "miles" => Some(OdometerUnits::Miles),
        "km" | "kms" | "kilometer" | "kilometers" | "kilometre" | "kilometres" => {
            Some(OdometerUnits::Kilometres)
        }
        _ => None,
    }
}

/// The amount is kept as sent; `type` is an enumeration (lower-cased),
/// `currency` an ISO 4217 code (upper-cased).
fn price(element: &Element) -> Option<Price> {
    Some(Price {
        value: element.value()?,
        kind: element.attr("type").map(str::to_lowercase),
        currency: element.attr("currency").map(str::to_uppercase),
    })
}

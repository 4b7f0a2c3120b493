//! A lead as ADF: AAP field → ADF element, per the AAP ADF mapping. The vendor
//! is the dealership from config, never from the caller; the provider is the
//! agent that took the lead. What ADF has no element for (appointment, whether
//! a phone number may be called or only texted, preferred contact) goes into
//! the customer's comments so CRM staff see it. The lead arrives here cleaned
//! and with the contact points the consent does not cover already taken out.

use chrono::{DateTime, Utc};

use super::lead::{
    AppointmentOutcome, AppointmentType, Lead, MileageArg, PreferredContact, SaleCondition,
    TradeIn, VehicleOfInterest, parse_instant,
};
use crate::adf::{
    AdfAddress, AdfContact, AdfCustomer, AdfId, AdfLead, AdfPhone, AdfProvider, AdfVehicle,
    AdfVendor, Interest, Odometer, OdometerUnits, ProspectStatus, RequestDate, VehicleStatus,
};
use crate::model::DealershipProfile;
use crate::model::DistanceUnit;

/// What the ADF document is built from besides the caller's arguments.
pub struct AdfContext<'a> {
    pub lead_id: &'a str,
    pub id_source: &'a str,
    pub dealership: &'a DealershipProfile,
    pub tz: chrono_tz::Tz,
    pub received_at: DateTime<Utc>,
    pub appointment: Option<&'a AppointmentOutcome>,
    /// A note from the bridge for staff (e.g. the listed vehicle has sold).
    pub note: Option<&'a str>,
}

pub fn to_adf(args: &Lead, cx: &AdfContext<'_>) -> AdfLead {
    let submitted = args
        .submitted_at
        .as_deref()
        .and_then(parse_instant)
        .unwrap_or(cx.received_at);
    let local = submitted.with_timezone(&cx.tz).fixed_offset();
    let test_drive = args
        .appointment
        .as_ref()
        .is_some_and(|a| a.appointment_type == AppointmentType::TestDrive);
    let mut vehicles = Vec::new();
    if let Some(v) = &args.vehicle_of_interest {
        vehicles.push(vehicle_of_interest(v, test_drive));
    }
    if let Some(t) = &args.trade_in {
        vehicles.push(trade_in(t));
    }
    AdfLead {
        status: ProspectStatus::New,
        ids: vec![AdfId {
            source: Some(cx.id_source.to_owned()),
            value: cx.lead_id.to_owned(),
        }],
        request_date: RequestDate::new(local),
        vehicles,
        customer: AdfCustomer {
            contact: customer_contact(args),
            comments: comments(args, cx),
        },
        vendor: vendor(cx),
        provider: Some(AdfProvider {
            name: args.source_agent.clone(),
            service: Some("AI agent lead via dms-bridge".into()),
            url: None,
        }),
        extras: Vec::new(),
    }
}

fn vehicle_of_interest(v: &VehicleOfInterest, test_drive: bool) -> AdfVehicle {
    let cpo = v.condition == Some(SaleCondition::Cpo);
    AdfVehicle {
        interest: if test_drive {
            Interest::TestDrive
        } else {
            Interest::Buy
        },
        status: match v.condition {
            Some(SaleCondition::Used | SaleCondition::Cpo) => VehicleStatus::Used,
            Some(SaleCondition::New) | None => VehicleStatus::New,
        },
        year: v.year,
        make: v.make.clone(),
        model: v.model.clone(),
        vin: v.vin.as_deref().map(crate::model::vin::normalize),
        stock: v.stock.clone(),
        trim: v.trim.clone(),
        bodystyle: v.body.clone(),
        transmission: v.transmission.as_deref().and_then(transmission_code),
        odometer: v.mileage.map(odometer),
        condition: None,
        price: None,
        comments: cpo.then(|| "certified pre-owned".to_owned()),
    }
}

fn trade_in(t: &TradeIn) -> AdfVehicle {
    AdfVehicle {
        interest: Interest::TradeIn,
        status: VehicleStatus::Used,
        year: t.year,
        make: t.make.clone(),
        model: t.model.clone(),
        vin: t.vin.as_deref().map(crate::model::vin::normalize),
        trim: t.trim.clone(),
        odometer: t.mileage.map(odometer),
        condition: t.condition.map(|c| c.as_str().to_owned()),
        ..AdfVehicle::default()
    }
}

/// ADF's transmission is `A` or `M`; anything else is left out rather than guessed.
fn transmission_code(text: &str) -> Option<String> {
    let t = text.to_ascii_lowercase();
    if t.contains("manual") || t == "m" {
        Some("M".into())
    } else if ["auto", "cvt", "dct", "dual-clutch"]
        .iter()
        .any(|k| t.contains(k))
        || t == "a"
    {
        Some("A".into())
    } else {
        None
    }
}

fn odometer(m: MileageArg) -> Odometer {
    match m {
        MileageArg::Miles(value) => Odometer {
            value: u64::from(value),
            units: OdometerUnits::Miles,
        },
        MileageArg::Reading(r) => Odometer {
            value: r.value,
            units: match r.unit {
                DistanceUnit::Mi => OdometerUnits::Miles,
                DistanceUnit::Km => OdometerUnits::Kilometres,
            },
        },
    }
}

fn customer_contact(args: &Lead) -> AdfContact {
    let c = &args.customer;
    let preferred = c.preferred_contact;
    let texts = preferred == Some(PreferredContact::Sms);
    AdfContact {
        first_name: Some(c.first_name.trim().to_owned()),
        last_name: Some(c.last_name.trim().to_owned()),
        full_name: None,
        email: c.email.as_ref().map(|e| e.trim().to_owned()),
        email_preferred: preferred == Some(PreferredContact::Email),
        phones: c
            .phone
            .iter()
            .map(|p| AdfPhone {
                number: p.clone(),
                kind: Some(if texts { "cellphone" } else { "voice" }.into()),
                preferred: matches!(
                    preferred,
                    Some(PreferredContact::Phone | PreferredContact::Sms)
                ),
            })
            .collect(),
        address: c.address.as_ref().map(|a| AdfAddress {
            street: [&a.address_line_1, &a.address_line_2]
                .into_iter()
                .flatten()
                .cloned()
                .collect(),
            city: a.city.clone(),
            regioncode: a.state.clone(),
            postalcode: a.zip.clone(),
            country: Some(a.country.clone().unwrap_or_else(|| "US".into())),
        }),
    }
}

/// The customer's message, then what ADF has no element for, one item per line.
fn comments(args: &Lead, cx: &AdfContext<'_>) -> Option<String> {
    let mut lines = Vec::new();
    if let Some(m) = args
        .message
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
    {
        lines.push(m.to_owned());
    }
    if let (Some(req), Some(outcome)) = (&args.appointment, cx.appointment) {
        let kind = match req.appointment_type {
            AppointmentType::Sales => "sales visit",
            AppointmentType::Service => "service visit",
            AppointmentType::TestDrive => "test drive",
            AppointmentType::TradeIn => "trade-in appraisal",
        };
        let when = outcome
            .requested_at
            .as_deref()
            .map_or("no time given".to_owned(), |t| format!("at {t}"));
        let mut line = format!("Appointment requested: {kind}, {when}");
        if let Some(d) = req.duration_minutes {
            line.push_str(&format!(", {d} min"));
        }
        if !outcome.proposed_times.is_empty() {
            line.push_str(&format!(
                " (outside opening hours; offered {})",
                outcome.proposed_times.join(", ")
            ));
        }
        lines.push(line);
        if let Some(notes) = req.notes.as_deref().filter(|n| !n.trim().is_empty()) {
            lines.push(format!("Appointment notes: {}", notes.trim()));
        }
    }
    // Only the contact points the consent covers are in the document (the
    // others were withheld). A phone number alone cannot say whether the
    // customer allowed calls, texts or both; staff are told when it is one.
    if let Some(grant) = &args.consent
        && args.customer.phone.is_some()
        && !grant.phone_and_sms_allowed()
    {
        lines.push(format!(
            "Contact consent: {} only (granted {})",
            grant.allowed_channels.join(", "),
            grant.granted_at.trim()
        ));
    }
    if let Some(p) = args.customer.preferred_contact {
        let p = match p {
            PreferredContact::Email => "email",
            PreferredContact::Phone => "phone",
            PreferredContact::Sms => "text message",
            PreferredContact::Any => "any allowed channel",
        };
        lines.push(format!("Preferred contact: {p}"));
    }
    if let Some(note) = cx.note {
        lines.push(note.to_owned());
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

fn vendor(cx: &AdfContext<'_>) -> AdfVendor {
    let d = cx.dealership;
    AdfVendor {
        id: Some(AdfId {
            source: Some(cx.id_source.to_owned()),
            value: d.id.clone(),
        }),
        name: d.name.clone(),
        url: d.website.clone(),
        contact: AdfContact {
            full_name: Some(d.name.clone()),
            phones: d
                .phones
                .first()
                .map(|p| AdfPhone {
                    number: p.number.clone(),
                    kind: Some("voice".into()),
                    preferred: false,
                })
                .into_iter()
                .collect(),
            ..AdfContact::default()
        },
    }
}

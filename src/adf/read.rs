//! Lenient ADF reader: accepts what lead providers really send (see
//! `lenient.rs` for the input clean-up and `tree.rs` for markup tolerance)
//! and never fails on content, only when there is no lead at all.

use thiserror::Error;

use super::date::parse_request_date;
use super::extras::{Extras, set_once};
use super::lenient;
use super::model::{
    AdfAddress, AdfContact, AdfCustomer, AdfId, AdfLead, AdfPhone, AdfProvider, AdfVendor,
    ProspectStatus, RequestDate,
};
use super::read_vehicle::read_vehicle;
use super::tree::{self, Element};

/// Why no lead could be read. Messages carry positions only, never document
/// text: they end up in logs and the text is customer PII.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AdfParseError {
    #[error("input is not XML: no ADF markup found")]
    NotXml,
    #[error("XML syntax error near byte {offset} before any <prospect> was read")]
    Syntax { offset: u64 },
    #[error("no <prospect> element found")]
    NoProspect,
}

/// Every `<prospect>` in `input`, in document order. Content problems never
/// fail: unreadable values become `None`, unknown elements go to `extras`.
///
/// # Errors
///
/// [`AdfParseError::NotXml`] when `input` holds no ADF markup at all,
/// [`AdfParseError::NoProspect`] when it holds no `<prospect>`, and
/// [`AdfParseError::Syntax`] when the markup breaks before the first one.
pub fn parse(input: &[u8]) -> Result<Vec<AdfLead>, AdfParseError> {
    let prepared = lenient::prepare(input).ok_or(AdfParseError::NotXml)?;
    let document = tree::build(&prepared.text);
    let mut prospects = Vec::new();
    document.root.find_all("prospect", &mut prospects);
    if prospects.is_empty() {
        return Err(match document.error_at {
            Some(at) => AdfParseError::Syntax {
                offset: at.saturating_add(prepared.skipped as u64),
            },
            None => AdfParseError::NoProspect,
        });
    }
    Ok(prospects.into_iter().map(read_prospect).collect())
}

fn read_prospect(prospect: &Element) -> AdfLead {
    let mut extras = Extras::default();
    let mut lead = AdfLead {
        status: prospect_status(prospect.attr("status")),
        ids: Vec::new(),
        request_date: RequestDate {
            raw: String::new(),
            parsed: None,
        },
        vehicles: Vec::new(),
        customer: AdfCustomer::default(),
        vendor: AdfVendor::default(),
        provider: None,
        extras: Vec::new(),
    };
    for child in &prospect.children {
        match child.name.as_str() {
            "id" => lead.ids.extend(read_id(child)),
            "requestdate" => lead.request_date = read_request_date(child),
            "vehicle" => lead.vehicles.push(read_vehicle(child, &mut extras)),
            "customer" => lead.customer = read_customer(child, &mut extras),
            "vendor" => lead.vendor = read_vendor(child, &mut extras),
            "provider" => lead.provider = Some(read_provider(child, &mut extras)),
            _ => extras.add("", child),
        }
    }
    lead.extras = extras.0;
    lead
}

fn prospect_status(raw: Option<&str>) -> ProspectStatus {
    match raw {
        Some(status) if status.eq_ignore_ascii_case("resend") => ProspectStatus::Resend,
        _ => ProspectStatus::New,
    }
}

/// An `<id>` without text identifies nothing and is dropped.
fn read_id(id: &Element) -> Option<AdfId> {
    Some(AdfId {
        value: id.value()?,
        source: id.attr("source").map(str::to_owned),
    })
}

fn read_request_date(element: &Element) -> RequestDate {
    let raw = element.value().unwrap_or_default();
    RequestDate {
        parsed: parse_request_date(&raw),
        raw,
    }
}

fn read_customer(customer: &Element, extras: &mut Extras) -> AdfCustomer {
    let mut read = AdfCustomer::default();
    let mut has_contact = false;
    let mut comments = Vec::new();
    for child in &customer.children {
        match child.name.as_str() {
            "contact" if !has_contact => {
                has_contact = true;
                read.contact = read_contact(child, "customer/contact", extras);
                split_full_name(&mut read.contact);
            }
            "comments" => comments.extend(child.value()),
            _ => extras.add("customer", child),
        }
    }
    read.comments = (!comments.is_empty()).then(|| comments.join("\n"));
    read
}

/// `vendorname` is often missing, with the dealer's name in
/// `contact/name part="full"` instead; that name is used then.
fn read_vendor(vendor: &Element, extras: &mut Extras) -> AdfVendor {
    let mut read = AdfVendor::default();
    let mut name = None;
    for child in &vendor.children {
        match child.name.as_str() {
            "id" if read.id.is_none() => read.id = read_id(child),
            "vendorname" => set_once(&mut name, child.value()),
            "url" => set_once(&mut read.url, child.value()),
            "contact" => read.contact = read_contact(child, "vendor/contact", extras),
            _ => extras.add("vendor", child),
        }
    }
    read.name = name
        .or_else(|| read.contact.full_name.clone())
        .unwrap_or_default();
    read
}

fn read_provider(provider: &Element, extras: &mut Extras) -> AdfProvider {
    let mut name = None;
    let mut read = AdfProvider::default();
    for child in &provider.children {
        match child.name.as_str() {
            "name" => set_once(&mut name, child.value()),
            "service" => set_once(&mut read.service, child.value()),
            "url" => set_once(&mut read.url, child.value()),
            _ => extras.add("provider", child),
        }
    }
    read.name = name.unwrap_or_default();
    read
}

fn read_contact(contact: &Element, path: &str, extras: &mut Extras) -> AdfContact {
    let mut read = AdfContact::default();
    for child in &contact.children {
        match child.name.as_str() {
            "name" => read_name(child, &mut read, path, extras),
            "email" if read.email.is_none() => {
                read.email = read_email(child);
                read.email_preferred = read.email.is_some() && is_preferred(child);
            }
            "phone" => read.phones.extend(read_phone(child)),
            "address" if read.address.is_none() => read.address = read_address(child, path, extras),
            _ => extras.add(path, child),
        }
    }
    read
}

/// `part` missing means a full name (the ADF default).
fn read_name(name: &Element, contact: &mut AdfContact, path: &str, extras: &mut Extras) {
    let part = name.attr("part").map(str::to_ascii_lowercase);
    match part.as_deref() {
        Some("first") => set_once(&mut contact.first_name, name.value()),
        Some("last" | "surname") => set_once(&mut contact.last_name, name.value()),
        None | Some("full") => set_once(&mut contact.full_name, name.value()),
        Some(other) => {
            if let Some(text) = name.value() {
                extras.push(format!("{path}/name[{other}]"), text);
            }
        }
    }
}

/// One name box on a web form gives only `part="full"`: the last word is
/// taken as the last name, the rest as the first name. Customers only: a
/// vendor's full name is the dealership's ("Example Motors"), not a person's.
fn split_full_name(contact: &mut AdfContact) {
    if contact.first_name.is_some() || contact.last_name.is_some() {
        return;
    }
    let Some(full) = contact.full_name.as_deref() else {
        return;
    };
    match full.rsplit_once(char::is_whitespace) {
        Some((first, last)) => {
            contact.first_name = Some(first.trim_end().to_owned());
            contact.last_name = Some(last.to_owned());
        }
        None => contact.first_name = Some(full.to_owned()),
    }
}

/// Strips the `mailto:` prefix some CRMs' documentation tells senders to add.
fn read_email(email: &Element) -> Option<String> {
    let text = email.value()?;
    let address = match text.get(..7) {
        Some(prefix) if prefix.eq_ignore_ascii_case("mailto:") => text[7..].trim(),
        _ => text.as_str(),
    };
    (!address.is_empty()).then(|| address.to_owned())
}

fn read_phone(phone: &Element) -> Option<AdfPhone> {
    Some(AdfPhone {
        number: phone.value()?,
        kind: phone.attr("type").map(str::to_owned),
        preferred: is_preferred(phone),
    })
}

fn is_preferred(element: &Element) -> bool {
    element.attr("preferredcontact").is_some_and(|flag| {
        ["1", "true", "yes"]
            .iter()
            .any(|yes| flag.eq_ignore_ascii_case(yes))
    })
}

/// Street lines are ordered by their `line` attribute; an address with no
/// text at all (Activix sends empty elements) is no address.
fn read_address(address: &Element, path: &str, extras: &mut Extras) -> Option<AdfAddress> {
    let path = format!("{path}/address");
    let mut read = AdfAddress::default();
    let mut streets = Vec::new();
    for child in &address.children {
        match child.name.as_str() {
            "street" => {
                let line = child.attr("line").and_then(|line| line.parse::<u32>().ok());
                streets.extend(
                    child
                        .value()
                        .map(|street| (line.unwrap_or(u32::MAX), street)),
                );
            }
            "city" => set_once(&mut read.city, child.value()),
            "regioncode" => set_once(&mut read.regioncode, child.value()),
            "postalcode" => set_once(&mut read.postalcode, child.value()),
            "country" => set_once(&mut read.country, child.value()),
            _ => extras.add(&path, child),
        }
    }
    streets.sort_by_key(|(line, _)| *line);
    read.street = streets.into_iter().map(|(_, street)| street).collect();
    (read != AdfAddress::default()).then_some(read)
}

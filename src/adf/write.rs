//! Strict ADF 1.0 generator: declaration then `<?adf?>` PI first, lower-case
//! names, ADF DTD element order, everything escaped (no CDATA: a `]]>` in the
//! text would end it early), indented so no line comes near the 998-byte
//! e-mail limit. `extras` are not written.
//!
//! Whatever the model holds, the document is well-formed XML 1.0: a character
//! outside XML 1.0's `Char` production (C0 controls other than tab, line feed
//! and carriage return; U+FFFE, U+FFFF) cannot be written at all, not even as
//! a character reference, so it is left out of text and attribute values.
//! Callers decide before that what to refuse; this is the last line.

use std::borrow::Cow;
use std::io;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesPI, BytesText, Event};

use super::model::{
    AdfContact, AdfCustomer, AdfId, AdfLead, AdfProvider, AdfVehicle, AdfVendor, Interest,
    OdometerUnits, ProspectStatus, VehicleStatus,
};

type XmlWriter = Writer<Vec<u8>>;

/// The ADF document for `lead`, ready to be sent as an e-mail body or posted.
#[must_use]
pub fn render(lead: &AdfLead) -> String {
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing into a `Vec` cannot fail; an error here would be a quick-xml bug.
    let written = write_document(&mut writer, lead);
    debug_assert!(written.is_ok(), "writing ADF into memory failed");
    let mut bytes = writer.into_inner();
    bytes.push(b'\n');
    // Every byte written came from `&str`s, so this is always valid UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn write_document(w: &mut XmlWriter, lead: &AdfLead) -> io::Result<()> {
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::PI(BytesPI::new(r#"adf version="1.0""#)))?;
    w.create_element("adf").write_inner_content(|w| {
        w.create_element("prospect")
            .with_attribute(("status", prospect_status(lead.status)))
            .write_inner_content(|w| write_prospect(w, lead))?;
        Ok(())
    })?;
    Ok(())
}

fn prospect_status(status: ProspectStatus) -> &'static str {
    match status {
        ProspectStatus::New => "new",
        ProspectStatus::Resend => "resend",
    }
}

/// DTD order: `id*, requestdate, vehicle*, customer, vendor, provider?`.
fn write_prospect(w: &mut XmlWriter, lead: &AdfLead) -> io::Result<()> {
    for (index, id) in lead.ids.iter().enumerate() {
        write_id(w, id, index + 1)?;
    }
    text(w, "requestdate", &lead.request_date.raw)?;
    for vehicle in &lead.vehicles {
        write_vehicle(w, vehicle)?;
    }
    write_customer(w, &lead.customer)?;
    write_vendor(w, &lead.vendor)?;
    if let Some(provider) = &lead.provider {
        write_provider(w, provider)?;
    }
    Ok(())
}

fn write_id(w: &mut XmlWriter, id: &AdfId, sequence: usize) -> io::Result<()> {
    let sequence = sequence.to_string();
    let mut element = w
        .create_element("id")
        .with_attribute(("sequence", sequence.as_str()));
    if let Some(source) = &id.source {
        element = element.with_attribute(("source", xml_safe(source).as_ref()));
    }
    element.write_text_content(chars(&id.value))?;
    Ok(())
}

/// DTD order: `year, make, model, vin, stock, trim, bodystyle, transmission,
/// odometer, condition, price, comments`.
fn write_vehicle(w: &mut XmlWriter, vehicle: &AdfVehicle) -> io::Result<()> {
    w.create_element("vehicle")
        .with_attribute(("interest", xml_safe(interest(&vehicle.interest)).as_ref()))
        .with_attribute(("status", vehicle_status(vehicle.status)))
        .write_inner_content(|w| {
            let year = vehicle.year.map(|year| year.to_string());
            optional(w, "year", year.as_ref())?;
            optional(w, "make", vehicle.make.as_ref())?;
            optional(w, "model", vehicle.model.as_ref())?;
            optional(w, "vin", vehicle.vin.as_ref())?;
            optional(w, "stock", vehicle.stock.as_ref())?;
            optional(w, "trim", vehicle.trim.as_ref())?;
            optional(w, "bodystyle", vehicle.bodystyle.as_ref())?;
            optional(w, "transmission", vehicle.transmission.as_ref())?;
            write_odometer_and_price(w, vehicle)?;
            optional(w, "comments", vehicle.comments.as_ref())
        })?;
    Ok(())
}

/// `condition` sits between the two in DTD order.
fn write_odometer_and_price(w: &mut XmlWriter, vehicle: &AdfVehicle) -> io::Result<()> {
    if let Some(odometer) = &vehicle.odometer {
        let units = match odometer.units {
            OdometerUnits::Miles => "mi",
            OdometerUnits::Kilometres => "km",
        };
        w.create_element("odometer")
            .with_attribute(("units", units))
            .write_text_content(chars(&odometer.value.to_string()))?;
    }
    optional(w, "condition", vehicle.condition.as_ref())?;
    if let Some(price) = &vehicle.price {
        let mut element = w.create_element("price");
        if let Some(kind) = &price.kind {
            element = element.with_attribute(("type", xml_safe(kind).as_ref()));
        }
        if let Some(currency) = &price.currency {
            element = element.with_attribute(("currency", xml_safe(currency).as_ref()));
        }
        element.write_text_content(chars(&price.value))?;
    }
    Ok(())
}

fn interest(interest: &Interest) -> &str {
    match interest {
        Interest::Buy => "buy",
        Interest::Lease => "lease",
        Interest::Sell => "sell",
        Interest::TradeIn => "trade-in",
        Interest::TestDrive => "test-drive",
        Interest::Other(other) => other,
    }
}

fn vehicle_status(status: VehicleStatus) -> &'static str {
    match status {
        VehicleStatus::New => "new",
        VehicleStatus::Used => "used",
    }
}

fn write_customer(w: &mut XmlWriter, customer: &AdfCustomer) -> io::Result<()> {
    w.create_element("customer").write_inner_content(|w| {
        write_contact(w, &customer.contact)?;
        optional(w, "comments", customer.comments.as_ref())
    })?;
    Ok(())
}

fn write_vendor(w: &mut XmlWriter, vendor: &AdfVendor) -> io::Result<()> {
    w.create_element("vendor").write_inner_content(|w| {
        if let Some(id) = &vendor.id {
            write_id(w, id, 1)?;
        }
        text(w, "vendorname", &vendor.name)?;
        optional(w, "url", vendor.url.as_ref())?;
        write_contact(w, &vendor.contact)
    })?;
    Ok(())
}

fn write_provider(w: &mut XmlWriter, provider: &AdfProvider) -> io::Result<()> {
    w.create_element("provider").write_inner_content(|w| {
        name(w, "full", Some(&provider.name))?;
        optional(w, "service", provider.service.as_ref())?;
        optional(w, "url", provider.url.as_ref())
    })?;
    Ok(())
}

/// DTD order: `name+, email?, phone*, address?`.
fn write_contact(w: &mut XmlWriter, contact: &AdfContact) -> io::Result<()> {
    w.create_element("contact").write_inner_content(|w| {
        name(w, "first", contact.first_name.as_ref())?;
        name(w, "last", contact.last_name.as_ref())?;
        name(w, "full", contact.full_name.as_ref())?;
        if let Some(email) = &contact.email {
            let mut element = w.create_element("email");
            if contact.email_preferred {
                element = element.with_attribute(("preferredcontact", "1"));
            }
            element.write_text_content(chars(email))?;
        }
        for phone in &contact.phones {
            let mut element = w.create_element("phone");
            if let Some(kind) = &phone.kind {
                element = element.with_attribute(("type", xml_safe(kind).as_ref()));
            }
            if phone.preferred {
                element = element.with_attribute(("preferredcontact", "1"));
            }
            element.write_text_content(chars(&phone.number))?;
        }
        write_address(w, contact)
    })?;
    Ok(())
}

fn write_address(w: &mut XmlWriter, contact: &AdfContact) -> io::Result<()> {
    let Some(address) = &contact.address else {
        return Ok(());
    };
    w.create_element("address").write_inner_content(|w| {
        for (index, street) in address.street.iter().enumerate() {
            let line = (index + 1).to_string();
            w.create_element("street")
                .with_attribute(("line", line.as_str()))
                .write_text_content(chars(street))?;
        }
        optional(w, "city", address.city.as_ref())?;
        optional(w, "regioncode", address.regioncode.as_ref())?;
        optional(w, "postalcode", address.postalcode.as_ref())?;
        optional(w, "country", address.country.as_ref())
    })?;
    Ok(())
}

fn name(w: &mut XmlWriter, part: &str, value: Option<&String>) -> io::Result<()> {
    if let Some(value) = value {
        w.create_element("name")
            .with_attribute(("part", part))
            .write_text_content(chars(value))?;
    }
    Ok(())
}

fn optional(w: &mut XmlWriter, element: &str, value: Option<&String>) -> io::Result<()> {
    match value {
        Some(value) => text(w, element, value),
        None => Ok(()),
    }
}

fn text(w: &mut XmlWriter, element: &str, value: &str) -> io::Result<()> {
    w.create_element(element).write_text_content(chars(value))?;
    Ok(())
}

/// XML 1.0's `Char` production: the only characters a document may contain.
#[must_use]
pub fn is_xml_char(c: char) -> bool {
    matches!(c,
        '\u{9}' | '\u{A}' | '\u{D}'
        | '\u{20}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
}

/// `value` without the characters XML 1.0 cannot carry.
fn xml_safe(value: &str) -> Cow<'_, str> {
    if value.chars().all(is_xml_char) {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(value.chars().filter(|c| is_xml_char(*c)).collect())
    }
}

/// Text content: XML-safe, then escaped (`BytesText::new` escapes
/// `& < > " '` and writes a carriage return as `&#13;` so it survives
/// end-of-line normalisation), so no text is ever written raw.
fn chars(value: &str) -> BytesText<'static> {
    BytesText::new(&xml_safe(value)).into_owned()
}

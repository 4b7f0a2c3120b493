#![allow(clippy::unwrap_used, clippy::expect_used)]
//! ADF 1.0: the lenient parser against a corpus of messy real-world shapes
//! (our own samples in `tests/adf-corpus/`), and the strict generator by
//! round trip, strictness checks and snapshots.

use std::path::PathBuf;

use chrono::{DateTime, FixedOffset};
use dms_bridge::adf::*;
use quick_xml::Reader;
use quick_xml::events::Event;

// ---------------------------------------------------------------- helpers

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/adf-corpus")
}

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(corpus_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn parse_all(name: &str) -> Vec<AdfLead> {
    parse(&corpus(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn parse_one(name: &str) -> AdfLead {
    let mut leads = parse_all(name);
    assert_eq!(leads.len(), 1, "{name}: expected one prospect");
    leads.remove(0)
}

fn at(rfc3339: &str) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(rfc3339).unwrap()
}

fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

fn extra<'a>(lead: &'a AdfLead, path: &str) -> Option<&'a str> {
    lead.extras
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, text)| text.as_str())
}

fn vehicle_with(lead: &AdfLead, interest: Interest) -> &AdfVehicle {
    lead.vehicles
        .iter()
        .find(|v| v.interest == interest)
        .unwrap_or_else(|| panic!("no vehicle with interest {interest:?}"))
}

/// North-American VIN check digit (position 9).
fn vin_check_digit_ok(vin: &str) -> bool {
    const WEIGHTS: [u32; 17] = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2];
    fn value(c: char) -> Option<u32> {
        match c {
            '0'..='9' => c.to_digit(10),
            'A'..='H' => Some(c as u32 - 'A' as u32 + 1),
            'J'..='N' => Some(c as u32 - 'J' as u32 + 1),
            'P' => Some(7),
            'R' => Some(9),
            'S'..='Z' => Some(c as u32 - 'S' as u32 + 2),
            _ => None,
        }
    }
    let chars: Vec<char> = vin.chars().collect();
    if chars.len() != 17 {
        return false;
    }
    let Some(sum) = chars
        .iter()
        .zip(WEIGHTS)
        .map(|(&c, w)| value(c).map(|v| v * w))
        .sum::<Option<u32>>()
    else {
        return false;
    };
    let expected = match sum % 11 {
        10 => 'X',
        digit => char::from_digit(digit, 10).unwrap(),
    };
    chars[8] == expected
}

// ------------------------------------------------------- corpus: variants

#[test]
fn clean_lead_reads_every_field() {
    let lead = parse_one("01-clean.xml");
    assert_eq!(lead.status, ProspectStatus::New);
    assert_eq!(
        lead.ids,
        vec![AdfId {
            source: s("ExampleLeads"),
            value: "EL-20240501-0042".into()
        }]
    );
    assert_eq!(lead.request_date.raw, "2024-05-01T14:03:00-05:00");
    assert_eq!(
        lead.request_date.parsed,
        Some(at("2024-05-01T14:03:00-05:00"))
    );

    let buy = vehicle_with(&lead, Interest::Buy);
    assert_eq!(buy.status, VehicleStatus::Used);
    assert_eq!(buy.year, Some(2020));
    assert_eq!(buy.vin, s("3N1CP5BV8LL519113"));
    assert_eq!(buy.stock, s("L5191"));
    assert_eq!(buy.transmission, s("A"));
    assert_eq!(
        buy.odometer,
        Some(Odometer {
            value: 23450,
            units: OdometerUnits::Miles
        })
    );
    assert_eq!(
        buy.price,
        Some(Price {
            value: "18995.00".into(),
            kind: s("asking"),
            currency: s("USD")
        })
    );
    let trade = vehicle_with(&lead, Interest::TradeIn);
    assert_eq!(trade.condition, s("fair"));
    assert_eq!(trade.odometer.as_ref().map(|o| o.value), Some(151_200));

    let contact = &lead.customer.contact;
    assert_eq!(contact.first_name, s("Dana"));
    assert_eq!(contact.last_name, s("Whitfield"));
    assert_eq!(contact.full_name, None);
    assert_eq!(contact.email, s("dana.whitfield@example.com"));
    assert!(contact.email_preferred);
    assert_eq!(contact.phones.len(), 2);
    assert_eq!(contact.phones[1].number, "(555) 555-0173");
    assert_eq!(contact.phones[1].kind, s("voice"));
    let address = contact.address.as_ref().unwrap();
    assert_eq!(address.street, ["418 Maple Grove Rd", "Apt 3"]);
    assert_eq!(address.city, s("Springfield"));
    assert_eq!(address.regioncode, s("IL"));
    assert_eq!(address.postalcode, s("62704"));
    assert_eq!(address.country, s("US"));
    assert_eq!(
        lead.customer.comments,
        s("Is it still available? Can I come Saturday morning?")
    );

    assert_eq!(lead.vendor.name, "Example Motors");
    assert_eq!(lead.vendor.id.as_ref().unwrap().value, "EXM-001");
    assert_eq!(lead.vendor.url, s("https://www.example.com"));
    assert_eq!(lead.vendor.contact.full_name, s("Example Motors Sales"));
    // A dealership's name is not split into first/last.
    assert_eq!(lead.vendor.contact.first_name, None);
    let provider = lead.provider.as_ref().unwrap();
    assert_eq!(provider.name, "Example Leads");
    assert_eq!(provider.service, s("Website inquiry"));
    assert_eq!(provider.url, s("https://leads.example.com"));
    assert_eq!(lead.extras, []);
}

#[test]
fn bom_blank_lines_and_adf_version_attribute_without_pi() {
    let lead = parse_one("02-bom-leading-whitespace.xml");
    assert_eq!(lead.customer.contact.first_name, s("Marisol"));
    assert_eq!(lead.vehicles[0].interest, Interest::Lease);
    assert_eq!(lead.request_date.raw, "2025-09-22T18:07");
    assert_eq!(lead.request_date.parsed, Some(at("2025-09-22T18:07:00Z")));
}

#[test]
fn email_text_before_and_after_the_document() {
    let lead = parse_one("03-email-preamble.txt");
    assert_eq!(lead.ids[0].value, "WEB-7781");
    assert_eq!(lead.customer.contact.email, s("priya.l@example.com"));
    // No vehicle attributes: the ADF defaults apply.
    assert_eq!(lead.vehicles[0].interest, Interest::Buy);
    assert_eq!(lead.vehicles[0].status, VehicleStatus::New);
    assert_eq!(lead.vehicles[0].vin, s("1HGCM82633A004352"));
}

#[test]
fn legacy_template_pi_first_unquoted_attributes_truncated_offset() {
    let lead = parse_one("04-legacy-template.xml");
    assert_eq!(lead.status, ProspectStatus::Resend);
    assert_eq!(
        lead.ids,
        vec![AdfId {
            source: s("LegacySite"),
            value: "LS-000913".into()
        }]
    );
    assert_eq!(lead.vehicles[0].status, VehicleStatus::Used);
    assert_eq!(lead.vehicles[0].vin, s("5YJ3E1EA2KF317000"));
    assert_eq!(lead.request_date.raw, "2000-03-30T15:30:20-08:0");
    assert_eq!(
        lead.request_date.parsed,
        Some(at("2000-03-30T15:30:20-08:00"))
    );
    let contact = &lead.customer.contact;
    assert_eq!(contact.full_name, s("Walter Brennan-Hale"));
    assert_eq!(contact.first_name, s("Walter"));
    assert_eq!(contact.last_name, s("Brennan-Hale"));
    assert_eq!(contact.phones[0].kind, s("voice"));
    assert!(contact.phones[0].preferred);
}

#[test]
fn windows_1252_bytes_declared_as_utf8_are_decoded() {
    let bytes = corpus("05-windows-1252.xml");
    assert!(
        std::str::from_utf8(&bytes).is_err(),
        "fixture must not be UTF-8"
    );
    let lead = parse(&bytes).unwrap().remove(0);
    assert_eq!(lead.customer.contact.first_name, s("Renée"));
    assert_eq!(lead.customer.contact.last_name, s("Côté"));
    assert_eq!(
        lead.customer.comments,
        s("I’d like the “weekend” special – is the café open?")
    );
    assert_eq!(lead.request_date.parsed, Some(at("2021-10-13T00:00:00Z")));
}

#[test]
fn capitalised_tags_attributes_and_values() {
    let lead = parse_one("06-capitalised.xml");
    assert_eq!(lead.status, ProspectStatus::Resend);
    assert_eq!(lead.ids[0].source, s("UpperCaseCRM"));
    let vehicle = &lead.vehicles[0];
    assert_eq!(vehicle.interest, Interest::Buy);
    assert_eq!(vehicle.status, VehicleStatus::Used);
    assert_eq!(vehicle.make, s("NISSAN"));
    assert_eq!(vehicle.vin, s("3N1CP5BV8LL519113"));
    assert_eq!(
        vehicle.odometer,
        Some(Odometer {
            value: 114_000,
            units: OdometerUnits::Miles
        })
    );
    let price = vehicle.price.as_ref().unwrap();
    assert_eq!(
        (
            price.value.as_str(),
            price.kind.as_deref(),
            price.currency.as_deref()
        ),
        ("17,500", Some("quote"), Some("USD"))
    );
    assert_eq!(lead.customer.contact.last_name, s("Whitfield"));
    assert!(lead.customer.contact.email_preferred);
    assert_eq!(lead.vendor.name, "Example Motors");
    assert_eq!(lead.request_date.raw, "2008-06-25T8:47:50");
    assert_eq!(lead.request_date.parsed, Some(at("2008-06-25T08:47:50Z")));
}

#[test]
fn namespace_prefixed_tags_and_attributes() {
    let lead = parse_one("07-namespace-prefix.xml");
    assert_eq!(lead.vehicles[0].interest, Interest::TestDrive);
    assert_eq!(lead.vehicles[0].model, s("Model 3"));
    assert_eq!(lead.customer.contact.first_name, s("Tomasz"));
    assert_eq!(lead.vendor.name, "Example EV Center");
    assert_eq!(lead.request_date.parsed, Some(at("2024-02-14T10:00:00Z")));
}

#[test]
fn bare_prospect_without_adf_wrapper_or_prolog() {
    let lead = parse_one("08-bare-prospect.xml");
    assert_eq!(lead.customer.contact.first_name, s("Lucia"));
    assert_eq!(lead.customer.contact.phones[0].kind, s("cellphone"));
    assert_eq!(lead.request_date.raw, "06/25/2008 08:47 AM");
    assert_eq!(lead.request_date.parsed, Some(at("2008-06-25T08:47:00Z")));
}

#[test]
fn several_prospects_in_document_order() {
    let leads = parse_all("09-two-prospects.xml");
    let ids: Vec<_> = leads.iter().map(|l| l.ids[0].value.as_str()).collect();
    assert_eq!(ids, ["B-1", "B-2"]);
    assert_eq!(leads[1].vehicles[0].model, s("HR-V"));
    assert_eq!(leads[1].customer.contact.phones[0].number, "555-0155");
    assert_eq!(leads[1].customer.contact.email, None);
}

#[test]
fn vehicle_quirks() {
    let lead = parse_one("10-vehicle-quirks.xml");
    let interests: Vec<_> = lead.vehicles.iter().map(|v| v.interest.clone()).collect();
    // Trade-in first: order is kept, nothing is positional.
    assert_eq!(
        interests,
        [
            Interest::TradeIn,
            Interest::Buy,
            Interest::Buy,
            Interest::TestDrive,
            Interest::Other("browse".into()),
            Interest::Buy,
        ]
    );
    let trade = &lead.vehicles[0];
    assert_eq!(trade.status, VehicleStatus::Used);
    assert_eq!(trade.year, None);
    assert_eq!(extra(&lead, "vehicle/year"), Some("2O15"));
    assert_eq!(
        trade.odometer,
        Some(Odometer {
            value: 88_000,
            units: OdometerUnits::Miles
        })
    );
    let buy = &lead.vehicles[1];
    assert_eq!(buy.stock, s("L5191"));
    assert_eq!(
        buy.odometer,
        Some(Odometer {
            value: 41_250,
            units: OdometerUnits::Kilometres
        })
    );
    // `<vehicle interest="buy" status="new"/>`
    assert_eq!(lead.vehicles[2], AdfVehicle::default());
    // No attributes at all: buy/new; unreadable odometer kept as text.
    assert_eq!(lead.vehicles[5].status, VehicleStatus::New);
    assert_eq!(lead.vehicles[5].odometer, None);
    assert_eq!(extra(&lead, "vehicle/odometer"), Some("unknown"));
}

#[test]
fn names_emails_phones_and_addresses() {
    let leads = parse_all("11-names-and-contacts.xml");
    let contact = &leads[0].customer.contact;
    // Full name only (in CDATA): split on the last space, full name kept.
    assert_eq!(contact.full_name, s("Mary Ellen O'Rourke"));
    assert_eq!(contact.first_name, s("Mary Ellen"));
    assert_eq!(contact.last_name, s("O'Rourke"));
    assert_eq!(contact.email, s("mary.orourke@example.com"));
    assert!(!contact.email_preferred);
    let phones: Vec<_> = contact
        .phones
        .iter()
        .map(|p| (p.number.as_str(), p.kind.as_deref(), p.preferred))
        .collect();
    assert_eq!(
        phones,
        [
            ("(555) 555-0161", Some("home"), false),
            ("+1 555 555 0162", Some("cellphone"), true),
        ]
    );
    let address = contact.address.as_ref().unwrap();
    assert_eq!(address.street, ["77 Harbor View Dr", "Unit 9"]);
    assert_eq!(address.city, None);
    assert_eq!(address.regioncode, s("OR"));

    // Full plus first/last: all three kept; no vendorname: dealer from contact.
    let vendor = &leads[0].vendor;
    assert_eq!(vendor.contact.full_name, s("Example Nissan of Springfield"));
    assert_eq!(vendor.contact.first_name, s("Sam"));
    assert_eq!(vendor.contact.last_name, s("Okonkwo"));
    assert_eq!(vendor.contact.email, s("sam@example.com"));
    assert_eq!(vendor.name, "Example Nissan of Springfield");
    assert_eq!(leads[0].provider.as_ref().unwrap().name, "Example Leads");
    assert_eq!(
        extra(&leads[0], "provider/contact/email"),
        Some("help@example.com")
    );

    // `part` missing is a full name; a single word becomes the first name.
    let contact = &leads[1].customer.contact;
    assert_eq!(contact.full_name, s("Cher"));
    assert_eq!(contact.first_name, s("Cher"));
    assert_eq!(contact.last_name, None);
    assert_eq!(extra(&leads[1], "customer/contact/name[middle]"), Some("Q"));
    assert_eq!(leads[1].vendor.contact, AdfContact::default());
}

#[test]
fn cdata_entities_and_unescaped_ampersands() {
    let lead = parse_one("12-text-escaping.xml");
    assert_eq!(
        lead.vehicles[0].comments,
        s("Smith & Sons trade; price < 20k & clean title")
    );
    assert_eq!(lead.customer.contact.first_name, s("Zoë"));
    assert_eq!(lead.customer.contact.last_name, s("D'Amato & Co"));
    let comments = lead.customer.comments.as_deref().unwrap();
    assert!(comments.starts_with("Budget <$20k & \"no haggle\" please."));
    assert!(comments.ends_with("Call after 5pm"));
    assert_eq!(lead.vendor.name, "A&B Motors élite — AT&T lot");
    assert_eq!(lead.vendor.url, s("https://example.com/?a=1&b=2"));
}

#[test]
fn request_date_variants_keep_raw_and_parse_when_possible() {
    let leads = parse_all("13-request-dates.xml");
    let dates: Vec<_> = leads
        .iter()
        .map(|l| (l.request_date.raw.as_str(), l.request_date.parsed))
        .collect();
    assert_eq!(
        dates,
        [
            ("2008-06-25T8:47:50", Some(at("2008-06-25T08:47:50Z"))),
            ("2025-09-22T18:07", Some(at("2025-09-22T18:07:00Z"))),
            ("2021-10-13T00:00:00Z", Some(at("2021-10-13T00:00:00Z"))),
            (
                "2000-03-30T15:30:20-08:0",
                Some(at("2000-03-30T15:30:20-08:00"))
            ),
            // No offset: read as UTC.
            ("2024-01-15T09:30:00", Some(at("2024-01-15T09:30:00Z"))),
            ("06/25/2008 08:47 PM", Some(at("2008-06-25T20:47:00Z"))),
            (
                "2024-05-01T14:03:00.250-0500",
                Some(at("2024-05-01T14:03:00.250-05:00"))
            ),
            ("yesterday at noon", None),
            ("", None),
        ]
    );
    // The offset as sent is kept, not just the instant.
    let truncated = leads[3].request_date.parsed.unwrap();
    assert_eq!(truncated.offset().local_minus_utc(), -8 * 3600);
}

#[test]
fn unknown_elements_go_to_extras_and_broken_end_tags_are_tolerated() {
    let lead = parse_one("14-extensions-and-broken-tags.xml");
    let vehicle = &lead.vehicles[0];
    // `<model>Civic</Make>` closes the model; what follows stays in the vehicle.
    assert_eq!(vehicle.model, s("Civic"));
    assert_eq!(vehicle.make, s("Honda"));
    assert_eq!(lead.ids.len(), 2);
    assert_eq!(lead.ids[1].source, s("MediaType"));
    for (path, text) in [
        ("leadtype", "Internet"),
        ("vehicle/doors", "4"),
        ("vehicle/colorcombination/exteriorcolor", "Sonic Gray"),
        ("vehicle/finance/amount", "425.25"),
        ("customer/contact/gender", "2"),
        ("customer/contact/address/apartment", "4B"),
        ("customer/timeframe/description", "Within 2 weeks"),
        ("customer/timeframe/earliestdate", "2024-05-01"),
    ] {
        assert_eq!(extra(&lead, path), Some(text), "{path}");
    }
    // `<comments>…</comment>` still closes the comments.
    assert_eq!(lead.customer.comments, s("Prefers text"));
    assert_eq!(lead.customer.contact.email, s("ingrid.vm@example.com"));
    // Only empty elements besides the apartment: no address.
    assert_eq!(lead.customer.contact.address, None);
    assert_eq!(lead.vendor.name, "Example Honda");
}

#[test]
fn no_prospect_and_not_xml_are_errors_without_document_text() {
    assert_eq!(
        parse(&corpus("15-no-prospect.xml")),
        Err(AdfParseError::NoProspect)
    );
    let secret = b"Hi, this is Dana Whitfield, call me at 555-0142.";
    let error = parse(secret).unwrap_err();
    assert_eq!(error, AdfParseError::NotXml);
    let message = error.to_string();
    assert!(!message.contains("Dana") && !message.contains("555"));
    assert_eq!(parse(b""), Err(AdfParseError::NotXml));
}

#[test]
fn every_corpus_vin_has_a_valid_check_digit() {
    let mut vins = Vec::new();
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let path = entry.unwrap().path();
        let Ok(leads) = parse(&std::fs::read(&path).unwrap()) else {
            continue;
        };
        let found = leads.iter().flat_map(|l| &l.vehicles);
        vins.extend(found.filter_map(|v| v.vin.clone()));
    }
    assert!(vins.len() >= 5, "corpus should carry VINs");
    for vin in vins {
        assert!(vin_check_digit_ok(&vin), "{vin}");
    }
}

// ------------------------------------------------ generator: round trip

fn contact(first: &str, last: &str) -> AdfContact {
    AdfContact {
        first_name: s(first),
        last_name: s(last),
        ..AdfContact::default()
    }
}

fn dealer() -> AdfVendor {
    AdfVendor {
        id: Some(AdfId {
            source: s("dms-bridge"),
            value: "DLR-0042".into(),
        }),
        name: "Example Motors".into(),
        url: s("https://www.example.com"),
        contact: AdfContact {
            full_name: s("Example Motors"),
            email: s("sales@example.com"),
            phones: vec![AdfPhone {
                number: "555-0100".into(),
                kind: s("voice"),
                preferred: false,
            }],
            ..AdfContact::default()
        },
    }
}

fn bridge() -> Option<AdfProvider> {
    Some(AdfProvider {
        name: "dms-bridge".into(),
        service: s("AI sales assistant"),
        url: s("https://bridge.example.com"),
    })
}

fn lead(request_date: &str, vehicles: Vec<AdfVehicle>, customer: AdfCustomer) -> AdfLead {
    AdfLead {
        status: ProspectStatus::New,
        ids: vec![AdfId {
            source: s("dms-bridge"),
            value: "L-0001".into(),
        }],
        request_date: RequestDate::new(at(request_date)),
        vehicles,
        customer,
        vendor: dealer(),
        provider: bridge(),
        extras: Vec::new(),
    }
}

/// Vehicle of interest + trade-in, address, comments needing escapes, non-ASCII.
fn full_lead() -> AdfLead {
    let wanted = AdfVehicle {
        interest: Interest::Buy,
        status: VehicleStatus::Used,
        year: Some(2020),
        make: s("Nissan"),
        model: s("Kicks"),
        vin: s("3N1CP5BV8LL519113"),
        stock: s("L5191"),
        trim: s("SV"),
        bodystyle: s("SUV"),
        transmission: s("A"),
        odometer: Some(Odometer {
            value: 23_450,
            units: OdometerUnits::Miles,
        }),
        condition: None,
        price: Some(Price {
            value: "18995.00".into(),
            kind: s("quote"),
            currency: s("USD"),
        }),
        comments: s("Asked for the \"SV\" trim & <heated> seats"),
    };
    let trade = AdfVehicle {
        interest: Interest::TradeIn,
        status: VehicleStatus::Used,
        year: Some(2003),
        make: s("Honda"),
        model: s("Accord"),
        vin: s("1HGCM82633A004352"),
        odometer: Some(Odometer {
            value: 151_200,
            units: OdometerUnits::Kilometres,
        }),
        condition: s("fair"),
        ..AdfVehicle::default()
    };
    let customer = AdfCustomer {
        contact: AdfContact {
            full_name: s("José Nuñez"),
            email: s("jose.nunez@example.com"),
            email_preferred: true,
            phones: vec![
                AdfPhone {
                    number: "(555) 555-0142".into(),
                    kind: s("cellphone"),
                    preferred: true,
                },
                AdfPhone {
                    number: "555-0143".into(),
                    kind: None,
                    preferred: false,
                },
            ],
            address: Some(AdfAddress {
                street: vec!["418 Maple Grove Rd".into(), "Apt 3".into()],
                city: s("Springfield"),
                regioncode: s("IL"),
                postalcode: s("62704"),
                country: s("US"),
            }),
            ..contact("José", "Nuñez")
        },
        comments: s("Trade & cash < 20k? Tell me \"yes\" or 'no' > maybe. ]]> ¿Sí?"),
    };
    lead("2026-05-01T14:03:00-05:00", vec![wanted, trade], customer)
}

/// "Call me back" with no vehicle at all.
fn customer_only_lead() -> AdfLead {
    let customer = AdfCustomer {
        contact: AdfContact {
            phones: vec![AdfPhone {
                number: "555-0119".into(),
                kind: s("voice"),
                preferred: false,
            }],
            ..contact("Marisol", "Okafor")
        },
        comments: s("Please call me back about financing."),
    };
    AdfLead {
        provider: None,
        vendor: AdfVendor {
            id: None,
            url: None,
            ..dealer()
        },
        ..lead("2026-05-02T09:00:00+00:00", Vec::new(), customer)
    }
}

fn resend_lead() -> AdfLead {
    let vehicle = AdfVehicle {
        interest: Interest::TestDrive,
        status: VehicleStatus::New,
        year: Some(2025),
        make: s("Honda"),
        model: s("Civic"),
        ..AdfVehicle::default()
    };
    let customer = AdfCustomer {
        contact: AdfContact {
            email: s("dana.whitfield@example.com"),
            ..contact("Dana", "Whitfield")
        },
        comments: None,
    };
    AdfLead {
        status: ProspectStatus::Resend,
        ..lead("2026-05-03T18:30:00+02:00", vec![vehicle], customer)
    }
}

fn many_ids_lead() -> AdfLead {
    let ids = [
        (Some("dms-bridge"), "L-0004"),
        (Some("LeadSubProgram"), "SPRING & SAVE"),
        (Some("MediaType"), "WEB"),
        (None, "no-source-7"),
    ];
    AdfLead {
        ids: ids
            .into_iter()
            .map(|(source, value)| AdfId {
                source: source.map(str::to_owned),
                value: value.into(),
            })
            .collect(),
        ..resend_lead()
    }
}

fn all_leads() -> [AdfLead; 4] {
    [
        full_lead(),
        customer_only_lead(),
        resend_lead(),
        many_ids_lead(),
    ]
}

#[test]
fn rendered_leads_parse_back_to_the_same_value() {
    for lead in all_leads() {
        let xml = render(&lead);
        let parsed = parse(xml.as_bytes()).unwrap();
        assert_eq!(parsed, [lead], "{xml}");
    }
}

// ------------------------------------------------ generator: strictness

const PROLOG: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<?adf version=\"1.0\"?>\n<adf>\n";

/// Reads `xml` with every quick-xml check on, to the end, and returns the
/// element and attribute names seen.
fn strict_names(xml: &str) -> Vec<String> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().enable_all_checks(true);
    let mut names = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) => {
                names.push(e.name().as_ref().to_owned());
                for attr in e.attributes() {
                    names.push(attr.unwrap().key.as_ref().to_owned());
                }
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("not well-formed at {}: {e}", reader.error_position()),
        }
    }
    names
}

#[test]
fn rendered_documents_are_strict_adf() {
    for lead in all_leads() {
        let xml = render(&lead);
        assert!(xml.starts_with(PROLOG), "{xml}");
        assert!(!xml.contains("<![CDATA["));
        let names = strict_names(&xml);
        assert!(names.contains(&"prospect".to_owned()));
        for name in names {
            assert_eq!(name, name.to_lowercase());
        }
        for line in xml.lines() {
            assert!(line.len() < 998, "line of {} bytes", line.len());
        }
    }
}

#[test]
fn rendered_text_and_attributes_are_escaped() {
    let xml = render(&full_lead());
    assert!(xml.contains(
        "Trade &amp; cash &lt; 20k? Tell me &quot;yes&quot; or &apos;no&apos; &gt; maybe. ]]&gt; ¿Sí?"
    ));
    assert!(xml.contains("José Nuñez"));
    let xml = render(&many_ids_lead());
    assert!(xml.contains(r#"<id sequence="2" source="LeadSubProgram">SPRING &amp; SAVE</id>"#));
    assert!(xml.contains(r#"<id sequence="4">no-source-7</id>"#));
}

#[test]
fn generator_writes_dtd_order_and_ignores_extras() {
    let mut lead = full_lead();
    lead.extras.push(("leadtype".into(), "Internet".into()));
    let xml = render(&lead);
    assert!(!xml.contains("leadtype"));
    let order = [
        "<id ",
        "<requestdate>",
        "<vehicle interest=\"buy\"",
        "<vehicle interest=\"trade-in\"",
        "<customer>",
        "<vendor>",
        "<provider>",
    ];
    let positions: Vec<_> = order.iter().map(|tag| xml.find(tag).unwrap()).collect();
    assert!(positions.is_sorted(), "{xml}");
}

#[test]
fn snapshot_full_lead() {
    insta::assert_snapshot!("adf_full_lead", render(&full_lead()));
}

#[test]
fn snapshot_customer_only_lead() {
    insta::assert_snapshot!("adf_customer_only_lead", render(&customer_only_lead()));
}

#[test]
fn empty_vehicle_and_empty_vendor_contact_round_trip() {
    let mut lead = resend_lead();
    lead.vehicles.push(AdfVehicle::default());
    lead.vendor.contact = AdfContact::default();
    let xml = render(&lead);
    assert_eq!(parse(xml.as_bytes()).unwrap(), [lead], "{xml}");
}

// ------------------------------------------------ generator: any text at all

/// Any character, weighted towards those XML 1.0 cannot carry.
fn any_char() -> impl proptest::strategy::Strategy<Value = char> {
    use proptest::prelude::*;
    prop_oneof![
        3 => prop::char::range(' ', '~'),
        1 => prop::sample::select(vec![
            '\u{0}', '\u{1}', '\u{8}', '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{1b}', '\u{1f}',
            '\u{7f}', '\u{85}', '\u{fdd0}', '\u{fffe}', '\u{ffff}', '\u{10ffff}', '&', '<',
        ]),
        2 => any::<char>(),
    ]
}

fn any_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop::collection::vec(any_char(), 0..24).prop_map(String::from_iter)
}

/// `full_lead()` with every text and attribute value replaced by `texts`.
fn lead_of(t: &[String]) -> AdfLead {
    let mut lead = full_lead();
    let mut next = t.iter().cycle().cloned();
    let mut text = move || next.next().unwrap_or_default();
    lead.ids[0] = AdfId {
        source: Some(text()),
        value: text(),
    };
    for v in &mut lead.vehicles {
        v.interest = Interest::Other(text());
        for slot in [
            &mut v.make,
            &mut v.model,
            &mut v.vin,
            &mut v.stock,
            &mut v.trim,
            &mut v.bodystyle,
            &mut v.transmission,
            &mut v.condition,
            &mut v.comments,
        ] {
            *slot = Some(text());
        }
        v.price = Some(Price {
            value: text(),
            kind: Some(text()),
            currency: Some(text()),
        });
    }
    let c = &mut lead.customer;
    c.comments = Some(text());
    c.contact.first_name = Some(text());
    c.contact.last_name = Some(text());
    c.contact.full_name = Some(text());
    c.contact.email = Some(text());
    for p in &mut c.contact.phones {
        p.number = text();
        p.kind = Some(text());
    }
    if let Some(a) = &mut c.contact.address {
        a.street = vec![text(), text()];
        a.city = Some(text());
        a.regioncode = Some(text());
        a.postalcode = Some(text());
        a.country = Some(text());
    }
    lead.vendor.name = text();
    lead.vendor.url = Some(text());
    if let Some(p) = &mut lead.provider {
        p.name = text();
        p.service = Some(text());
    }
    lead
}

fn is_xml_1_0_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 200,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]

    /// Whatever the model holds, the document is well-formed XML 1.0: no
    /// character outside the `Char` production, and a strict parser accepts
    /// it. Text the writer can carry reads back unchanged (but for the trim).
    #[test]
    fn the_writer_never_writes_a_document_that_is_not_xml(texts in proptest::collection::vec(any_text(), 8..40)) {
        let lead = lead_of(&texts);
        let xml = render(&lead);
        if let Some(c) = xml.chars().find(|&c| !is_xml_1_0_char(c)) {
            proptest::prop_assert!(false, "U+{:04X} written: {}", u32::from(c), xml);
        }
        if let Err(e) = roxmltree::Document::parse(&xml) {
            proptest::prop_assert!(false, "{}: {}", e, xml);
        }
        let read = parse(xml.as_bytes()).unwrap().remove(0);
        let kept = |s: &Option<String>| {
            s.as_deref()
                .map(|s| s.chars().filter(|&c| is_xml_1_0_char(c)).collect::<String>())
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
        };
        proptest::prop_assert_eq!(read.customer.comments, kept(&lead.customer.comments));
        proptest::prop_assert_eq!(read.vendor.url, kept(&lead.vendor.url));
    }
}

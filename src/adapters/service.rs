//! Service scheduling as every adapter kind reports it: the dealership's
//! service menu, open slots, bookings and cancellations.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, TimeZone};
use chrono_tz::Tz;

use super::rest::records::Fields;

/// One service on the dealership's menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceItem {
    pub code: String,
    pub name: Option<String>,
}

/// What the caller wants a slot for.
#[derive(Debug, Clone)]
pub struct SlotRequest<'a> {
    pub service_codes: &'a [String],
    /// Inclusive local dates.
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub vin: Option<&'a str>,
    pub year: Option<i32>,
    pub make: Option<&'a str>,
    pub model: Option<&'a str>,
}

/// An open slot, in the dealership's local offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub start: DateTime<FixedOffset>,
    pub end: DateTime<FixedOffset>,
    pub advisor_id: Option<String>,
}

/// A booking to make. Carries customer data: never log it.
#[derive(Debug, Clone)]
pub struct BookingRequest<'a> {
    pub service_codes: &'a [String],
    pub start: DateTime<FixedOffset>,
    pub end: DateTime<FixedOffset>,
    pub vin: Option<&'a str>,
    pub year: Option<i32>,
    pub make: Option<&'a str>,
    pub model: Option<&'a str>,
    pub first_name: &'a str,
    pub last_name: &'a str,
    pub email: Option<&'a str>,
    /// E.164.
    pub phone: Option<&'a str>,
    pub comment: Option<&'a str>,
}

/// What the scheduler made of a booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Booking {
    pub appointment_id: Option<String>,
    pub status: BookedStatus,
}

/// A scheduler's answer to a booking, in canonical terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BookedStatus {
    /// The slot is the customer's.
    Booked,
    /// The scheduler queued the customer for the slot; the dealership confirms later.
    Waitlisted,
}

/// An appointment to cancel.
#[derive(Debug, Clone)]
pub struct CancelRequest<'a> {
    pub appointment_id: &'a str,
    pub reason: Option<&'a str>,
}

/// Slots without a length are this long.
const DEFAULT_MINUTES: i64 = 30;

impl Slot {
    /// A slot from mapped fields (`start`, and `end` or `duration_minutes`,
    /// `advisor_id`); `None` when `start` cannot be read.
    pub fn from_fields(fields: &Fields, tz: Tz) -> Option<Self> {
        let start = parse_time(fields.get("start")?, tz)?;
        let end = fields
            .get("end")
            .and_then(|e| parse_time(e, tz))
            .unwrap_or_else(|| {
                let minutes = fields
                    .get("duration_minutes")
                    .and_then(|d| d.parse::<i64>().ok())
                    .filter(|d| *d > 0)
                    .unwrap_or(DEFAULT_MINUTES);
                start + chrono::Duration::minutes(minutes)
            });
        Some(Self {
            start,
            end,
            advisor_id: fields.get("advisor_id").cloned(),
        })
    }
}

/// Vendor times: RFC 3339, offsets without a colon (`2024-05-01T09:30-0500`),
/// or local times without an offset (read in the dealership's time zone).
pub fn parse_time(text: &str, tz: Tz) -> Option<DateTime<FixedOffset>> {
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t);
    }
    for format in ["%Y-%m-%dT%H:%M%z", "%Y-%m-%dT%H:%M:%S%z"] {
        if let Ok(t) = DateTime::parse_from_str(text, format) {
            return Some(t);
        }
    }
    ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .and_then(|local| tz.from_local_datetime(&local).earliest())
        .map(|t| t.fixed_offset())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_time_shapes_vendors_send() {
        let tz = chrono_tz::America::Chicago;
        let want = "2026-05-01T09:30:00-05:00";
        for text in [
            want,
            "2026-05-01T09:30-0500",
            "2026-05-01T09:30:00-0500",
            "2026-05-01T09:30",
        ] {
            let t = parse_time(text, tz).map(|t| t.to_rfc3339());
            assert_eq!(t.as_deref(), Some(want), "{text}");
        }
        assert_eq!(parse_time("tomorrow", tz), None);
    }

    #[test]
    fn a_slot_ends_after_its_duration_or_half_an_hour() {
        let tz = chrono_tz::America::Chicago;
        let mut fields = Fields::from([("start".to_owned(), "2026-05-01T09:30-0500".to_owned())]);
        let slot = Slot::from_fields(&fields, tz).unwrap();
        assert_eq!(slot.end.to_rfc3339(), "2026-05-01T10:00:00-05:00");
        fields.insert("duration_minutes".into(), "15".into());
        let slot = Slot::from_fields(&fields, tz).unwrap();
        assert_eq!(slot.end.to_rfc3339(), "2026-05-01T09:45:00-05:00");
    }
}

//! Scheduler answers read from a vendor's mapped fields: slot times in the
//! shapes vendors send them.

use chrono::{DateTime, FixedOffset, NaiveDateTime, TimeZone};
use chrono_tz::Tz;

use super::rest::records::Fields;
use crate::model::service::Slot;

/// Slots without a length are this long.
const DEFAULT_MINUTES: i64 = 30;

/// A slot from mapped fields (`start`, and `end` or `duration_minutes`,
/// `advisor_id`); `None` when `start` cannot be read.
pub fn slot_from_fields(fields: &Fields, tz: Tz) -> Option<Slot> {
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
    Some(Slot {
        start,
        end,
        advisor_id: fields.get("advisor_id").cloned(),
    })
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
        let slot = slot_from_fields(&fields, tz).unwrap();
        assert_eq!(slot.end.to_rfc3339(), "2026-05-01T10:00:00-05:00");
        fields.insert("duration_minutes".into(), "15".into());
        let slot = slot_from_fields(&fields, tz).unwrap();
        assert_eq!(slot.end.to_rfc3339(), "2026-05-01T09:45:00-05:00");
    }
}

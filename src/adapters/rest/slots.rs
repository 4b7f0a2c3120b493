//! Open service slots read from a scheduler answer's mapped fields.

use chrono_tz::Tz;

use super::records::Fields;
use crate::adapters::mapping::parse_time;
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

#[cfg(test)]
mod tests {
    use super::*;

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

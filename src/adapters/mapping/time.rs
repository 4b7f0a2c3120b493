//! Times in the shapes vendors write them: the free-form ones scheduler and
//! DMS answers carry, and those a repair-order mapping names a format for.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, TimeZone};
use chrono_tz::Tz;

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

/// Reads a time written as `format` (see [`super::ro_spec::FieldSource`]).
pub fn read_time(text: &str, format: Option<&str>, tz: Tz) -> Option<DateTime<FixedOffset>> {
    let in_zone = |utc: DateTime<chrono::Utc>| Some(utc.with_timezone(&tz).fixed_offset());
    match format {
        None | Some("rfc3339") => parse_time(text, tz),
        Some("epoch_ms") => in_zone(DateTime::from_timestamp_millis(text.parse().ok()?)?),
        Some("epoch_s") => in_zone(DateTime::from_timestamp(text.parse().ok()?, 0)?),
        // Alternatives separated by `|`: a close time that is sometimes left out.
        Some(formats) => formats.split('|').find_map(|format| {
            let local = NaiveDateTime::parse_from_str(text, format)
                .ok()
                .or_else(|| {
                    // A date-only format: the start of that local day.
                    NaiveDate::parse_from_str(text, format)
                        .ok()
                        .and_then(|d| d.and_hms_opt(0, 0, 0))
                })?;
            tz.from_local_datetime(&local)
                .earliest()
                .map(|t| t.fixed_offset())
        }),
    }
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
    fn reads_the_time_shapes_of_each_dms() {
        let tz = chrono_tz::America::Chicago;
        let at =
            |text: &str, format: Option<&str>| read_time(text, format, tz).map(|t| t.to_rfc3339());
        let want = Some("2026-05-01T08:15:00-05:00".to_owned());
        assert_eq!(at("2026-05-01 08:15", Some("%Y-%m-%d %H:%M")), want);
        assert_eq!(at("202605010815", Some("%Y%m%d%H%M")), want);
        assert_eq!(at("1777641300000", Some("epoch_ms")), want);
        assert_eq!(at("2026-05-01T08:15-0500", None), want);
        assert_eq!(
            at("2026-05-01", Some("%Y-%m-%d")).as_deref(),
            Some("2026-05-01T00:00:00-05:00")
        );
        assert_eq!(
            at("2026-05-01", Some("%Y-%m-%d %H:%M|%Y-%m-%d")).as_deref(),
            Some("2026-05-01T00:00:00-05:00")
        );
        assert_eq!(at("soon", Some("epoch_ms")), None);
    }
}

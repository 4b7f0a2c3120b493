//! `<requestdate>` as senders actually write it. ADF asks for ISO-8601 with an
//! offset; real leads drop seconds, zero padding or the offset, truncate the
//! offset (`-08:0`, copied from the spec's own example) or use US notation.
//!
//! A time without an offset is read as UTC: the sender's zone is unknown, and
//! UTC keeps the result deterministic; the raw text is always kept alongside.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone, Utc};

/// The instant `raw` denotes, or `None` when it cannot be read.
pub(super) fn parse_request_date(raw: &str) -> Option<DateTime<FixedOffset>> {
    let text = raw.trim();
    iso(text).or_else(|| us(text))
}

/// `YYYY-MM-DD[(T| )H:MM[:SS[.fff]]][Z|±HH[:MM]]`, leniently padded.
fn iso(text: &str) -> Option<DateTime<FixedOffset>> {
    let (date, rest) = match text.split_once(['T', 't', ' ']) {
        Some((date, rest)) => (date, rest.trim()),
        None => (text, ""),
    };
    let date = NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    let (time, offset) = split_offset(rest);
    let time = if time.is_empty() {
        NaiveTime::MIN
    } else {
        clock_time(time)?
    };
    let offset = match offset {
        Some(offset) => parse_offset(offset)?,
        None => utc(),
    };
    offset.from_local_datetime(&date.and_time(time)).single()
}

/// Splits `18:07:00-05:00` into the clock time and the offset text (`Z` → `+00:00`).
fn split_offset(rest: &str) -> (&str, Option<&str>) {
    if let Some(time) = rest.strip_suffix(['Z', 'z']) {
        return (time.trim_end(), Some("+00:00"));
    }
    match rest.rfind(['+', '-']) {
        Some(at) => (rest[..at].trim_end(), Some(&rest[at..])),
        None => (rest, None),
    }
}

/// `H:MM`, `HH:MM:SS`, `HH:MM:SS.fff`; chrono accepts a one-digit hour.
fn clock_time(text: &str) -> Option<NaiveTime> {
    ["%H:%M:%S%.f", "%H:%M"]
        .iter()
        .find_map(|format| NaiveTime::parse_from_str(text, format).ok())
}

/// `±HH:MM`, `±HHMM`, `±HH`, and the truncated `±HH:M` (one minute digit is
/// the tens digit: `-08:0` means `-08:00`).
fn parse_offset(text: &str) -> Option<FixedOffset> {
    let (sign, digits) = match text.split_at_checked(1)? {
        ("+", digits) => (1, digits),
        ("-", digits) => (-1, digits),
        _ => return None,
    };
    let (hours, minutes) = match digits.split_once(':') {
        Some(parts) => parts,
        None if digits.len() > 2 => digits.split_at_checked(2)?,
        None => (digits, ""),
    };
    let hours: i32 = hours.parse().ok()?;
    let minutes: i32 = match minutes.len() {
        0 => 0,
        1 => minutes.parse::<i32>().ok()? * 10,
        _ => minutes.parse().ok()?,
    };
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60))
}

/// `06/25/2008 08:47 AM` and friends, read as UTC (no offset is ever given).
fn us(text: &str) -> Option<DateTime<FixedOffset>> {
    const FORMATS: [&str; 4] = [
        "%m/%d/%Y %I:%M %p",
        "%m/%d/%Y %I:%M:%S %p",
        "%m/%d/%Y %H:%M:%S",
        "%m/%d/%Y %H:%M",
    ];
    let naive = FORMATS
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
        .or_else(|| {
            let date = NaiveDate::parse_from_str(text, "%m/%d/%Y").ok()?;
            Some(date.and_time(NaiveTime::MIN))
        })?;
    utc().from_local_datetime(&naive).single()
}

fn utc() -> FixedOffset {
    Utc.fix()
}

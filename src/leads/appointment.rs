//! The appointment part of a lead. Through an ADF intake nothing can be booked,
//! so a time within the department's opening hours is `requested` (staff
//! confirm it) and a time outside them is `proposed`, with the nearest start
//! times that fit, so the agent can offer real alternatives at once.

use chrono::{DateTime, Datelike, Duration, NaiveTime, SecondsFormat, TimeZone, Timelike, Utc};
use chrono_tz::Tz;

use super::lead::{
    AppointmentOutcome, AppointmentRequest, AppointmentStatus, AppointmentType, Lead, parse_instant,
};
use crate::model::dealership::{Hours, Weekday};

/// Alternatives offered with `proposed`.
const PROPOSALS: usize = 3;
/// Proposals start on this grid (minutes).
const STEP_MINUTES: i64 = 30;
/// How far ahead to look for an opening.
const HORIZON_DAYS: i64 = 14;

/// The outcome of `lead`'s appointment request, if it makes one, at a
/// dealership with `hours` in `tz`; the appointment's id derives from the lead's.
pub fn of_lead(lead: &Lead, lead_id: &str, hours: &[Hours], tz: Tz) -> Option<AppointmentOutcome> {
    lead.appointment.as_ref().map(|request| {
        let at = request.appointment_at.as_deref().and_then(parse_instant);
        outcome(request, at, hours, tz, format!("{lead_id}-appt"))
    })
}

/// The outcome of `request` at a dealership with `hours` in `tz`.
pub fn outcome(
    request: &AppointmentRequest,
    requested_at: Option<DateTime<Utc>>,
    hours: &[Hours],
    tz: Tz,
    appointment_id: String,
) -> AppointmentOutcome {
    let base = AppointmentOutcome {
        appointment_id,
        appointment_type: request.appointment_type,
        status: AppointmentStatus::Requested,
        requested_at: requested_at.map(|t| local_rfc3339(t, tz)),
        confirmed_at: None,
        proposed_times: Vec::new(),
    };
    let (Some(at), Some(week)) = (
        requested_at,
        hours.iter().find(|h| {
            h.department
                .eq_ignore_ascii_case(request.appointment_type.department())
        }),
    ) else {
        return base;
    };
    let length = Duration::minutes(i64::from(
        request
            .duration_minutes
            .unwrap_or(default_minutes(request.appointment_type)),
    ));
    if fits(week, at, length, tz) {
        return base;
    }
    let proposed_times = alternatives(week, at, length, tz)
        .into_iter()
        .map(|t| local_rfc3339(t, tz))
        .collect::<Vec<_>>();
    if proposed_times.is_empty() {
        // Closed for the whole horizon: leave it to staff rather than refuse.
        return base;
    }
    AppointmentOutcome {
        status: AppointmentStatus::Proposed,
        proposed_times,
        ..base
    }
}

/// Whether `[at, at + length]` lies within the opening hours of `department`;
/// `None` when the dealership publishes no hours for it.
pub fn within_hours(
    hours: &[Hours],
    department: &str,
    at: DateTime<Utc>,
    length: Duration,
    tz: Tz,
) -> Option<bool> {
    let week = hours
        .iter()
        .find(|h| h.department.eq_ignore_ascii_case(department))?;
    Some(fits(week, at, length, tz))
}

fn default_minutes(kind: AppointmentType) -> u32 {
    match kind {
        AppointmentType::Service => 60,
        AppointmentType::Sales | AppointmentType::TestDrive | AppointmentType::TradeIn => 30,
    }
}

/// Whether `[at, at + length]` lies within one day's opening hours.
fn fits(week: &Hours, at: DateTime<Utc>, length: Duration, tz: Tz) -> bool {
    let local = at.with_timezone(&tz);
    let Some((open, close)) = day_range(week, local.weekday()) else {
        return false;
    };
    let start = local.time();
    let end = start.overflowing_add_signed(length);
    // A wrap past midnight (end < start) never fits a same-day range.
    end.1 == 0 && start >= open && end.0 <= close && end.0 >= start
}

/// The first start times on the half-hour grid after `at` that fit the opening hours.
fn alternatives(week: &Hours, at: DateTime<Utc>, length: Duration, tz: Tz) -> Vec<DateTime<Utc>> {
    let mut t = round_up(at);
    let end = at + Duration::days(HORIZON_DAYS);
    let mut found = Vec::new();
    while t < end && found.len() < PROPOSALS {
        if fits(week, t, length, tz) {
            found.push(t);
        }
        t += Duration::minutes(STEP_MINUTES);
    }
    found
}

fn round_up(at: DateTime<Utc>) -> DateTime<Utc> {
    let past = i64::from(at.minute()) % STEP_MINUTES * 60 + i64::from(at.second());
    let floor = at - Duration::seconds(past) - Duration::nanoseconds(i64::from(at.nanosecond()));
    if floor == at {
        at
    } else {
        floor + Duration::minutes(STEP_MINUTES)
    }
}

fn day_range(week: &Hours, day: chrono::Weekday) -> Option<(NaiveTime, NaiveTime)> {
    let day = match day {
        chrono::Weekday::Mon => Weekday::Monday,
        chrono::Weekday::Tue => Weekday::Tuesday,
        chrono::Weekday::Wed => Weekday::Wednesday,
        chrono::Weekday::Thu => Weekday::Thursday,
        chrono::Weekday::Fri => Weekday::Friday,
        chrono::Weekday::Sat => Weekday::Saturday,
        chrono::Weekday::Sun => Weekday::Sunday,
    };
    week.on(day)
}

/// RFC 3339 in the dealership's local offset, e.g. `2026-05-03T11:00:00-05:00`.
pub fn local_rfc3339(t: DateTime<Utc>, tz: Tz) -> String {
    tz.from_utc_datetime(&t.naive_utc())
        .fixed_offset()
        .to_rfc3339_opts(SecondsFormat::Secs, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn week() -> Vec<Hours> {
        let weekly = [Weekday::Monday, Weekday::Tuesday]
            .into_iter()
            .map(|d| (d, "09:00-18:00".to_owned()))
            .collect();
        vec![Hours {
            department: "sales".into(),
            weekly,
        }]
    }

    fn request(at: &str) -> (AppointmentRequest, Option<DateTime<Utc>>) {
        let req = AppointmentRequest {
            appointment_type: AppointmentType::TestDrive,
            appointment_at: Some(at.into()),
            duration_minutes: None,
            notes: None,
        };
        (req, parse_instant(at))
    }

    #[test]
    fn a_time_within_hours_is_requested() {
        // Monday 2026-11-23 10:00 in Chicago.
        let (req, at) = request("2026-11-23T10:00:00-06:00");
        let o = outcome(&req, at, &week(), chrono_tz::America::Chicago, "a".into());
        assert_eq!(o.status, AppointmentStatus::Requested);
        assert_eq!(o.requested_at.as_deref(), Some("2026-11-23T10:00:00-06:00"));
    }

    #[test]
    fn a_time_outside_hours_is_proposed_with_the_next_openings() {
        // Monday 17:45: a 30-minute slot would end after closing.
        let (req, at) = request("2026-11-23T17:45:00-06:00");
        let o = outcome(&req, at, &week(), chrono_tz::America::Chicago, "a".into());
        assert_eq!(o.status, AppointmentStatus::Proposed);
        assert_eq!(
            o.proposed_times,
            [
                "2026-11-24T09:00:00-06:00",
                "2026-11-24T09:30:00-06:00",
                "2026-11-24T10:00:00-06:00"
            ]
        );
    }

    #[test]
    fn without_hours_for_the_department_it_stays_requested() {
        let (mut req, at) = request("2026-11-23T03:00:00-06:00");
        req.appointment_type = AppointmentType::Service;
        let o = outcome(&req, at, &week(), chrono_tz::America::Chicago, "a".into());
        assert_eq!(o.status, AppointmentStatus::Requested);
    }
}

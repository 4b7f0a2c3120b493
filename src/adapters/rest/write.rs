//! Write operations of a REST profile (booking and cancelling a service
//! appointment): one request with a JSON body rendered from the profile, the
//! answer read by path. Vendor refusals (a taken slot, an unknown id) arrive
//! through the profile's error table like any other error.

use std::collections::BTreeMap;

use chrono::format::{Item, StrftimeItems};
use chrono::{DateTime, FixedOffset, SecondsFormat};
use serde_json::Value;

use super::RestAdapter;
use super::body::{BodyTemplate, Lists};
use super::fetch::Endpoint;
use super::profile::WriteSpec;
use super::records::compile_request;
use crate::adapters::mapping::ValuePath;
use crate::adapters::mapping::path::scalar_text;
use crate::adapters::template::param_names;
use crate::adapters::template::{Template, TemplateContext};
use crate::adapters::{AdapterError, BuildError};
use crate::model::service::{BookedStatus, Booking, BookingRequest, CancelRequest};

/// What a booking's path, query and body may use. `service_codes` is also a
/// list (see `body.rs`); `phone_national` is the number without its country
/// code for North American numbers (vendors that want ten digits);
/// `booking_ref` is the bridge's id for the booking, the same on every send
/// (for a vendor's client reference, so a resend books once).
pub(super) const BOOK_PARAMS: [&str; 15] = [
    "start",
    "end",
    "service_codes",
    "vin",
    "year",
    "make",
    "model",
    "first_name",
    "last_name",
    "email",
    "phone",
    "phone_national",
    "comment",
    "date",
    "booking_ref",
];
pub(super) const BOOK_LISTS: [&str; 1] = ["service_codes"];
pub(super) const CANCEL_PARAMS: [&str; 2] = ["appointment_id", "reason"];

pub(super) struct WriteOp {
    pub(super) spec: WriteSpec,
    path: Template,
    query: Vec<(String, Template)>,
    body: Option<BodyTemplate>,
    /// The answer fields the profile names, by canonical name.
    answer: BTreeMap<&'static str, ValuePath>,
}

impl WriteOp {
    /// The path of answer field `name`, if the profile gives one.
    pub(super) fn answer(&self, name: &str) -> Option<&ValuePath> {
        self.answer.get(name)
    }
}

/// Which operation is compiled: its place in the profile, what it takes and
/// the answer fields it requires and allows.
pub(super) struct WriteKind {
    pub at: &'static str,
    pub params: &'static [&'static str],
    pub lists: &'static [&'static str],
    pub answer: (&'static [&'static str], &'static [&'static str]),
}

pub(super) const BOOK: WriteKind = WriteKind {
    at: "book_appointment",
    params: &BOOK_PARAMS,
    lists: &BOOK_LISTS,
    answer: (&["appointment_id"], &["status"]),
};
pub(super) const CANCEL: WriteKind = WriteKind {
    at: "cancel_appointment",
    params: &CANCEL_PARAMS,
    lists: &[],
    answer: (&[], &[]),
};

pub(super) fn compile(
    kind: &WriteKind,
    spec: &WriteSpec,
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> Option<WriteOp> {
    let at = kind.at;
    let names = param_names(kind.params);
    let ctx = TemplateContext {
        params: &names,
        ..*ctx
    };
    let before = errors.len();
    let (path, query) = compile_request(at, &spec.path, &spec.query, &ctx, errors);
    let body = spec.body.as_ref().and_then(|b| {
        BodyTemplate::compile(
            &format!("{at}.body"),
            &Value::Object(b.clone()),
            &ctx,
            kind.lists,
            errors,
        )
    });
    if let Some(format) = &spec.time_format
        && StrftimeItems::new(format).any(|i| matches!(i, Item::Error))
    {
        errors.push(BuildError::in_profile(format!(
            "{at}.time_format: not a chrono format"
        )));
    }
    let (required, optional) = kind.answer;
    let mut answer = BTreeMap::new();
    for &name in required.iter().chain(optional) {
        let Some(text) = spec.answer.get(name) else {
            continue;
        };
        match ValuePath::parse(text) {
            Ok(path) => {
                answer.insert(name, path);
            }
            Err(e) => errors.push(BuildError::in_profile(format!("{at}.answer.{name}: {e}"))),
        }
    }
    for name in required {
        if !spec.answer.contains_key(*name) {
            errors.push(BuildError::in_profile(format!(
                "{at}.answer: {name} is required"
            )));
        }
    }
    for name in spec.answer.keys() {
        if !required.contains(&name.as_str()) && !optional.contains(&name.as_str()) {
            errors.push(BuildError::in_profile(format!(
                "{at}.answer.{name}: not a field of this operation"
            )));
        }
    }
    if errors.len() > before {
        return None;
    }
    Some(WriteOp {
        spec: spec.clone(),
        path: path?,
        query,
        body,
        answer,
    })
}

impl RestAdapter {
    pub(super) async fn book(
        &self,
        op: &WriteOp,
        request: &BookingRequest<'_>,
    ) -> Result<Booking, AdapterError> {
        let (params, lists) = self.booking_params(op, request);
        let answer = self.write(op, &params, &lists, false).await?;
        let appointment_id = op
            .answer("appointment_id")
            .and_then(|p| p.first(&answer))
            .and_then(scalar_text)
            .filter(|id| !id.is_empty());
        let Some(appointment_id) = appointment_id else {
            return Err(AdapterError::InvalidResponse(
                "the booking answer has no appointment id".into(),
            ));
        };
        let vendor_status = op
            .answer("status")
            .and_then(|p| p.first(&answer))
            .and_then(scalar_text);
        let status = match vendor_status {
            None => BookedStatus::Booked,
            Some(s) => match op
                .spec
                .statuses
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(&s))
            {
                Some((_, status)) => *status,
                None => {
                    // Booked upstream all the same: failing here would invite a second booking.
                    tracing::warn!(profile = %self.profile_name, vendor_status = %s, "Booking answer has a status the profile does not map; taken as booked.");
                    BookedStatus::Booked
                }
            },
        };
        Ok(Booking {
            appointment_id: Some(appointment_id),
            status,
        })
    }

    pub(super) async fn cancel(
        &self,
        op: &WriteOp,
        request: &CancelRequest<'_>,
    ) -> Result<(), AdapterError> {
        let params = BTreeMap::from([
            (
                "appointment_id".to_owned(),
                request.appointment_id.to_owned(),
            ),
            (
                "reason".to_owned(),
                request.reason.unwrap_or_default().to_owned(),
            ),
        ]);
        // Cancelling twice leaves the same state: safe to retry.
        self.write(op, &params, &Lists::new(), true).await?;
        Ok(())
    }

    pub(super) async fn write(
        &self,
        op: &WriteOp,
        params: &BTreeMap<String, String>,
        lists: &Lists,
        idempotent: bool,
    ) -> Result<Value, AdapterError> {
        let ctx = TemplateContext {
            vars: &self.vars,
            secrets: &self.secrets,
            dealership_id: &self.dealership.id,
            params,
        };
        let body = op.body.as_ref().and_then(|b| b.render(&ctx, lists));
        let endpoint = Endpoint {
            method: &op.spec.method,
            path: &op.path,
            query: &op.query,
            params,
            body: body.as_ref(),
        };
        self.call_write(&endpoint, idempotent).await
    }

    fn booking_params(
        &self,
        op: &WriteOp,
        r: &BookingRequest<'_>,
    ) -> (BTreeMap<String, String>, Lists) {
        let tz = self.dealership.timezone;
        let time = |t: &DateTime<FixedOffset>| {
            let local = t.with_timezone(&tz);
            match &op.spec.time_format {
                Some(f) => local.format(f).to_string(),
                None => local.to_rfc3339_opts(SecondsFormat::Secs, false),
            }
        };
        let text = |v: Option<&str>| v.unwrap_or_default().to_owned();
        let params = BTreeMap::from([
            ("start".to_owned(), time(&r.start)),
            ("end".to_owned(), time(&r.end)),
            (
                "date".to_owned(),
                r.start.with_timezone(&tz).date_naive().to_string(),
            ),
            ("service_codes".to_owned(), r.service_codes.join(",")),
            ("vin".to_owned(), text(r.vin)),
            (
                "year".to_owned(),
                r.year.map(|y| y.to_string()).unwrap_or_default(),
            ),
            ("make".to_owned(), text(r.make)),
            ("model".to_owned(), text(r.model)),
            ("first_name".to_owned(), r.first_name.to_owned()),
            ("last_name".to_owned(), r.last_name.to_owned()),
            ("email".to_owned(), text(r.email)),
            ("phone".to_owned(), text(r.phone)),
            ("phone_national".to_owned(), national_number(r.phone)),
            ("comment".to_owned(), text(r.comment)),
            ("booking_ref".to_owned(), r.reference.to_owned()),
        ]);
        let lists = Lists::from([("service_codes".to_owned(), r.service_codes.to_vec())]);
        (params, lists)
    }
}

/// `+15125550188` → `5125550188` (vendors that want ten digits); other
/// countries keep their digits without `+`.
pub fn national_number(phone: Option<&str>) -> String {
    let digits = phone.unwrap_or_default().trim_start_matches('+');
    match digits.strip_prefix('1') {
        Some(rest) if rest.len() == 10 => rest.to_owned(),
        _ => digits.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn north_american_numbers_lose_their_country_code() {
        assert_eq!(super::national_number(Some("+15125550188")), "5125550188");
        assert_eq!(
            super::national_number(Some("+442071838750")),
            "442071838750"
        );
        assert_eq!(super::national_number(None), "");
    }
}

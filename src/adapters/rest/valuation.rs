//! The trade-value operation of a REST profile: one request for one VIN (or
//! two, for providers that first look the VIN up as their own vehicle id), the
//! valued vehicle found at `record`, its rough/average/clean trade-in amounts
//! read by path, and how long they hold. A provider that says it has no data
//! answers `None`.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use serde_json::Value;

use super::RestAdapter;
use super::fetch::Endpoint;
use super::profile::{LookupSpec, TradeValueSpec};
use super::records::compile_request;
use crate::adapters::mapping::ValuePath;
use crate::adapters::mapping::path::scalar_text;
use crate::adapters::template::{Template, TemplateContext};
use crate::adapters::{AdapterError, BuildError};
use crate::model::valuation::{TradeValueRequest, Valuation};
use crate::model::{Money, money::parse_amount};

/// Request parameters a trade-value path or query may use.
const PARAMS: [&str; 5] = ["vin", "mileage_mi", "mileage_km", "zip", "state"];
/// The prefix of a lookup's values among the valuation's parameters.
const LOOKUP: &str = "lookup";

pub(super) struct TradeValueOp {
    spec: TradeValueSpec,
    path: Template,
    query: Vec<(String, Template)>,
    record: ValuePath,
    available: Option<ValuePath>,
    amounts: [ValuePath; 3],
    details: [Option<ValuePath>; 5],
    valid_until: Option<ValuePath>,
    lookup: Option<Lookup>,
}

/// The compiled first call: its request, and the values it must give.
struct Lookup {
    method: String,
    path: Template,
    query: Vec<(String, Template)>,
    extract: Vec<(String, ValuePath)>,
}

pub(super) fn compile(
    spec: &TradeValueSpec,
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> Option<TradeValueOp> {
    let mut names = crate::adapters::template::param_names(&PARAMS);
    let lookup_ctx = TemplateContext {
        params: &names.clone(),
        ..*ctx
    };
    let lookup = spec
        .lookup
        .as_ref()
        .map(|l| compile_lookup(l, &lookup_ctx, errors));
    if let Some(l) = &spec.lookup {
        names.extend(
            l.extract
                .keys()
                .map(|k| (format!("{LOOKUP}.{k}"), String::new())),
        );
    }
    let ctx = TemplateContext {
        params: &names,
        ..*ctx
    };
    let (path, query) = compile_request("trade_value", &spec.path, &spec.query, &ctx, errors);
    let mut value_path = |at: &str, text: &str| {
        ValuePath::parse(text)
            .map_err(|e| errors.push(BuildError::in_profile(format!("trade_value.{at}: {e}"))))
            .ok()
    };
    let f = &spec.fields;
    let record = value_path("record", &spec.record);
    let available = spec
        .available
        .as_deref()
        .map(|p| value_path("available", p));
    let amounts = [
        value_path("fields.rough", &f.rough),
        value_path("fields.average", &f.average),
        value_path("fields.clean", &f.clean),
    ];
    let details = [&f.year, &f.make, &f.model, &f.series, &f.style]
        .map(|p| p.as_deref().map(|p| value_path("fields", p)));
    let valid_until = spec
        .valid_until
        .as_deref()
        .map(|p| value_path("valid_until", p));
    if query.len() != spec.query.len()
        || details.iter().any(|d| matches!(d, Some(None)))
        || matches!(valid_until, Some(None))
        || matches!(lookup, Some(None))
    {
        return None;
    }
    let [Some(rough), Some(average), Some(clean)] = amounts else {
        return None;
    };
    Some(TradeValueOp {
        spec: spec.clone(),
        path: path?,
        query,
        record: record?,
        available: match available {
            Some(p) => Some(p?),
            None => None,
        },
        amounts: [rough, average, clean],
        details: details.map(Option::flatten),
        valid_until: valid_until.flatten(),
        lookup: lookup.flatten(),
    })
}

fn compile_lookup(
    spec: &LookupSpec,
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> Option<Lookup> {
    let before = errors.len();
    let (path, query) = compile_request("trade_value.lookup", &spec.path, &spec.query, ctx, errors);
    let extract: Vec<_> = spec
        .extract
        .iter()
        .filter_map(|(name, p)| match ValuePath::parse(p) {
            Ok(path) => Some((name.clone(), path)),
            Err(e) => {
                errors.push(BuildError::in_profile(format!(
                    "trade_value.lookup.extract.{name}: {e}"
                )));
                None
            }
        })
        .collect();
    if spec.extract.is_empty() {
        errors.push(BuildError::in_profile(
            "trade_value.lookup.extract: name at least one value the valuation uses",
        ));
    }
    if errors.len() > before {
        return None;
    }
    Some(Lookup {
        method: spec.method.clone(),
        path: path?,
        query,
        extract,
    })
}

impl RestAdapter {
    pub(super) async fn value_trade(
        &self,
        op: &TradeValueOp,
        request: &TradeValueRequest<'_>,
    ) -> Result<Option<Valuation>, AdapterError> {
        let mut params = BTreeMap::from([
            ("vin".to_owned(), request.vin.to_owned()),
            ("mileage_mi".to_owned(), request.mileage_mi.to_string()),
            // 1 mi = 1.609344 km, in integer arithmetic.
            (
                "mileage_km".to_owned(),
                ((request.mileage_mi * 1_609_344 + 500_000) / 1_000_000).to_string(),
            ),
            ("zip".to_owned(), request.zip.to_owned()),
            ("state".to_owned(), self.dealership.region.clone()),
        ]);
        if let Some(lookup) = &op.lookup {
            let Some(found) = self.look_up(lookup, &params).await? else {
                return Ok(None);
            };
            params.extend(found);
        }
        let endpoint = Endpoint {
            method: &op.spec.method,
            path: &op.path,
            query: &op.query,
            params: &params,
            body: None,
        };
        let body = self.call(&endpoint, &[]).await?;
        if op
            .available
            .as_ref()
            .and_then(|p| p.first(&body))
            .is_some_and(|v| v == &Value::Bool(false))
        {
            return Ok(None);
        }
        let Some(record) = op.record.first(&body) else {
            return Ok(None);
        };
        let valid_until = self.valid_until(op, &body);
        self.read_valuation(op, record, valid_until).map(Some)
    }

    /// The lookup's values as `lookup.NAME` parameters; `None` when one is
    /// missing (the provider has no vehicle for the VIN).
    async fn look_up(
        &self,
        lookup: &Lookup,
        params: &BTreeMap<String, String>,
    ) -> Result<Option<Vec<(String, String)>>, AdapterError> {
        let endpoint = Endpoint {
            method: &lookup.method,
            path: &lookup.path,
            query: &lookup.query,
            params,
            body: None,
        };
        let answer = self.call(&endpoint, &[]).await?;
        Ok(lookup
            .extract
            .iter()
            .map(|(name, path)| {
                let value = path.first(&answer).and_then(scalar_text)?;
                (!value.is_empty()).then(|| (format!("{LOOKUP}.{name}"), value))
            })
            .collect())
    }

    /// The provider's own end of validity when the profile says where it is
    /// and the answer has a readable one; else the profile's period from now.
    fn valid_until(&self, op: &TradeValueOp, answer: &Value) -> DateTime<Utc> {
        let tz = self.dealership.timezone;
        let stated = op
            .valid_until
            .as_ref()
            .and_then(|p| p.first(answer))
            .and_then(scalar_text)
            .and_then(|text| {
                DateTime::parse_from_rfc3339(&text)
                    .map(|t| t.with_timezone(&Utc))
                    .ok()
                    .or_else(|| {
                        let day = NaiveDate::parse_from_str(&text, "%Y-%m-%d").ok()?;
                        let end = day.and_hms_opt(23, 59, 59)?;
                        Some(tz.from_local_datetime(&end).latest()?.with_timezone(&Utc))
                    })
            });
        stated.unwrap_or_else(|| {
            Utc::now()
                + chrono::Duration::from_std(op.spec.valid_for)
                    .unwrap_or_else(|_| chrono::Duration::days(7))
        })
    }

    fn read_valuation(
        &self,
        op: &TradeValueOp,
        record: &Value,
        valid_until: DateTime<Utc>,
    ) -> Result<Valuation, AdapterError> {
        let money = |path: &ValuePath| -> Result<Money, AdapterError> {
            path.first(record)
                .and_then(scalar_text)
                .and_then(|t| parse_amount(&t, op.spec.amounts))
                .map(|a| Money {
                    amount: a.minor,
                    currency: self.dealership.currency.clone(),
                })
                .ok_or_else(|| {
                    AdapterError::InvalidResponse(format!("no amount at {}", path.as_str()))
                })
        };
        let text = |i: usize| {
            op.details[i]
                .as_ref()
                .and_then(|p| p.first(record))
                .and_then(scalar_text)
                .filter(|t| !t.is_empty())
        };
        let [rough, average, clean] = &op.amounts;
        Ok(Valuation {
            provider: self.profile_name.clone(),
            year: text(0).and_then(|y| y.parse().ok()),
            make: text(1),
            model: text(2),
            series: text(3),
            style: text(4),
            rough: money(rough)?,
            average: money(average)?,
            clean: money(clean)?,
            valid_until,
        })
    }
}

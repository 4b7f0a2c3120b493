//! The trade-value operation of a REST profile: one request for one VIN, the
//! valued vehicle found at `record`, its rough/average/clean trade-in amounts
//! read by path. A provider that says it has no data answers `None`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::RestAdapter;
use super::fetch::Endpoint;
use super::profile::TradeValueSpec;
use crate::adapters::mapping::ValuePath;
use crate::adapters::mapping::path::scalar_text;
use crate::adapters::template::{Template, TemplateContext};
use crate::adapters::{AdapterError, BuildError};
use crate::model::valuation::{TradeValueRequest, Valuation};
use crate::model::{Money, money::parse_amount};

/// Request parameters a trade-value path or query may use.
const PARAMS: [&str; 5] = ["vin", "mileage_mi", "mileage_km", "zip", "state"];

pub(super) struct TradeValueOp {
    spec: TradeValueSpec,
    path: Template,
    query: Vec<(String, Template)>,
    record: ValuePath,
    available: Option<ValuePath>,
    amounts: [ValuePath; 3],
    details: [Option<ValuePath>; 5],
}

pub(super) fn compile(
    spec: &TradeValueSpec,
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> Option<TradeValueOp> {
    let names = crate::adapters::template::param_names(&PARAMS);
    let ctx = TemplateContext {
        params: &names,
        ..*ctx
    };
    let mut template = |at: &str, text: &str| {
        Template::compile(text, &ctx)
            .map_err(|e| errors.push(BuildError::in_profile(format!("trade_value.{at}: {e}"))))
            .ok()
    };
    let path = template("path", &spec.path);
    let query: Vec<_> = spec
        .query
        .iter()
        .filter_map(|(k, v)| template(&format!("query.{k}"), v).map(|t| (k.clone(), t)))
        .collect();
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
    if query.len() != spec.query.len() || details.iter().any(|d| matches!(d, Some(None))) {
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
    })
}

impl RestAdapter {
    pub(super) async fn value_trade(
        &self,
        op: &TradeValueOp,
        request: &TradeValueRequest<'_>,
    ) -> Result<Option<Valuation>, AdapterError> {
        let params = BTreeMap::from([
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
        self.read_valuation(op, record).map(Some)
    }

    fn read_valuation(&self, op: &TradeValueOp, record: &Value) -> Result<Valuation, AdapterError> {
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
        })
    }
}

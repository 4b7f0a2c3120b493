//! `service.check_availability`: open service slots for a set of service codes
//! and a vehicle, in the dealership's time zone.

use chrono::{NaiveDate, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::adapters::{Lookup, SlotRequest, UnitRef, UpstreamAdapter};
use crate::gateway::error::{Problem, ToolError};
use crate::gateway::{Check, ToolArgs, ToolContext};
use crate::model::{Domain, vin};
use crate::tools::to_json;

/// The widest date range one call may ask for.
const MAX_DAYS: i64 = 31;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AvailabilityArgs {
    pub dealership_id: String,
    /// Codes from the dealership's service menu (e.g. `01LOF` oil and filter).
    #[schemars(length(min = 1, max = 10))]
    pub service_codes: Vec<ServiceCode>,
    /// The customer's vehicle (check digit verified). Give `vin`, `vehicle_id`, or year, make and model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    /// A vehicle from `inventory.search` (e.g. a test drive's car being prepared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub vehicle_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1900, max = 2100))]
    pub year: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub model: Option<String>,
    /// First day (inclusive, `YYYY-MM-DD`, dealership time zone); not in the past.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub from: String,
    /// Last day (inclusive); at most 31 days after `from`.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub to: String,
}

/// A service code, as the dealership's menu names it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(transparent)]
pub struct ServiceCode(#[schemars(regex(pattern = r"^[A-Za-z0-9_.-]{1,32}$"))] pub String);

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AvailabilityResult {
    /// Open slots, earliest first.
    pub items: Vec<SlotView>,
    /// The dealership's IANA time zone; slot times carry its offset.
    pub timezone: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SlotView {
    /// RFC 3339 with the dealership's offset.
    pub start: String,
    pub end: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisor_id: Option<String>,
}

impl ToolArgs for AvailabilityArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        if let Some(v) = &self.vin {
            check.vin("/vin", v);
        }
        let ymm = self.year.is_some() && self.make.is_some() && self.model.is_some();
        if self.vin.is_none() && self.vehicle_id.is_none() && !ymm {
            check.problems.push(
                "",
                "give the vehicle: vin, vehicle_id, or year, make and model",
            );
        }
        let (from, to) = (date(&self.from), date(&self.to));
        if from.is_none() {
            check.problems.push("/from", "is not a calendar date");
        }
        if to.is_none() {
            check.problems.push("/to", "is not a calendar date");
        }
        let today = check
            .dealership
            .map(|d| Utc::now().with_timezone(&d.timezone).date_naive());
        if let (Some(from), Some(today)) = (from, today)
            && from < today
        {
            check.problems.push("/from", "is in the past");
        }
        if let (Some(from), Some(to)) = (from, to) {
            if to < from {
                check.problems.push("/to", "is before from");
            } else if (to - from).num_days() > MAX_DAYS {
                check
                    .problems
                    .push("/to", format!("is more than {MAX_DAYS} days after from"));
            }
        }
    }
}

fn date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

pub async fn check_availability(
    ctx: ToolContext<'_>,
    args: AvailabilityArgs,
) -> Result<Value, ToolError> {
    let dealership = ctx.dealership()?;
    let adapter = ctx.adapter(Domain::Service)?;
    let vehicle = resolve_vehicle(&ctx, &args).await?;
    let codes: Vec<String> = args.service_codes.iter().map(|c| c.0.clone()).collect();
    check_codes(&ctx, &codes).await?;
    let (Some(from), Some(to)) = (date(&args.from), date(&args.to)) else {
        return Err(ToolError::internal());
    };
    let request = SlotRequest {
        service_codes: &codes,
        from,
        to,
        vin: vehicle.vin.as_deref(),
        year: vehicle.year,
        make: vehicle.make.as_deref(),
        model: vehicle.model.as_deref(),
    };
    let mut slots = adapter
        .service_slots(&request)
        .await
        .map_err(ctx.upstream_error())?;
    let tz = dealership.timezone;
    let now = Utc::now();
    // Only what was asked for and is still ahead: vendors pad ranges.
    slots.retain(|s| {
        let day = s.start.with_timezone(&tz).date_naive();
        s.start > now && day >= from && day <= to
    });
    slots.sort_by_key(|s| s.start);
    slots.dedup_by_key(|s| (s.start, s.advisor_id.clone()));
    let local = |t: chrono::DateTime<chrono::FixedOffset>| {
        t.with_timezone(&tz)
            .to_rfc3339_opts(SecondsFormat::Secs, false)
    };
    to_json(AvailabilityResult {
        items: slots
            .into_iter()
            .map(|s| SlotView {
                start: local(s.start),
                end: local(s.end),
                advisor_id: s.advisor_id,
            })
            .collect(),
        timezone: dealership.profile.timezone.clone(),
    })
}

/// The vehicle as the scheduler wants it: VIN and/or year, make, model.
#[derive(Default)]
struct VehicleRef {
    vin: Option<String>,
    year: Option<i32>,
    make: Option<String>,
    model: Option<String>,
}

async fn resolve_vehicle(
    ctx: &ToolContext<'_>,
    args: &AvailabilityArgs,
) -> Result<VehicleRef, ToolError> {
    let mut vehicle = VehicleRef {
        vin: args.vin.as_deref().map(vin::normalize),
        year: args.year,
        make: args.make.clone(),
        model: args.model.clone(),
    };
    let Some(id) = &args.vehicle_id else {
        return Ok(vehicle);
    };
    let snapshot = ctx
        .adapter(Domain::Inventory)?
        .inventory()
        .await
        .map_err(ctx.upstream_error())?;
    match snapshot.lookup(UnitRef::Id(id)) {
        Lookup::Listed(v) => {
            vehicle.vin = vehicle.vin.or_else(|| v.vin.clone());
            vehicle.year = vehicle.year.or(v.year);
            vehicle.make = vehicle.make.or_else(|| v.make.clone());
            vehicle.model = vehicle.model.or_else(|| v.model.clone());
            Ok(vehicle)
        }
        Lookup::Sold | Lookup::NotFound => Err(ToolError::invalid_arguments(vec![Problem {
            pointer: "/vehicle_id".into(),
            message: "this dealership lists no vehicle with this id".into(),
        }])),
    }
}

/// Refuses codes that are not on the dealership's menu (when the upstream has one).
async fn check_codes(ctx: &ToolContext<'_>, codes: &[String]) -> Result<(), ToolError> {
    let menu = match ctx.adapter(Domain::Service)?.service_menu().await {
        Ok(menu) => menu,
        // Without a menu operation the scheduler itself judges the codes.
        Err(crate::adapters::AdapterError::Unsupported) => return Ok(()),
        Err(e) => return Err(ctx.upstream_error()(e)),
    };
    let known = |c: &str| menu.iter().any(|m| m.code.eq_ignore_ascii_case(c));
    let problems: Vec<Problem> = codes
        .iter()
        .enumerate()
        .filter(|(_, c)| !known(c))
        .map(|(i, _)| Problem {
            pointer: format!("/service_codes/{i}"),
            message: "is not on this dealership's service menu".into(),
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    let available: Vec<Value> = menu
        .iter()
        .take(50)
        .map(|m| json!({ "code": m.code, "name": m.name }))
        .collect();
    let mut error = ToolError::invalid_arguments(problems);
    if let Some(Value::Object(details)) = error.details.as_mut() {
        details.insert("service_menu".into(), Value::Array(available));
    }
    Err(error.with_hint("Pick codes from details.service_menu."))
}

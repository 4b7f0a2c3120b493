//! What availability and booking share: the customer's vehicle (given, or
//! looked up in inventory) and the service codes, checked against the menu.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::adapters::{AdapterError, Lookup, SlotRequest, UnitRef, UpstreamAdapter};
use crate::contract::error::{Problem, ToolError};
use crate::model::{Domain, vin};
use crate::tools::{Check, HandlerError, ToolContext};

/// A service code, as the dealership's menu names it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(transparent)]
pub struct ServiceCode(#[schemars(regex(pattern = r"^[A-Za-z0-9_.-]{1,32}$"))] pub String);

/// The vehicle as the caller gave it.
#[derive(Debug, Clone, Copy)]
pub struct VehicleQuery<'a> {
    pub vin: Option<&'a str>,
    pub vehicle_id: Option<&'a str>,
    pub year: Option<i32>,
    pub make: Option<&'a str>,
    pub model: Option<&'a str>,
}

/// A VIN with a valid check digit, a `vehicle_id`, or year, make and model.
pub fn check_vehicle(v: &VehicleQuery<'_>, check: &mut Check<'_>) {
    if let Some(text) = v.vin {
        check.vin("/vin", text);
    }
    let ymm = v.year.is_some() && v.make.is_some() && v.model.is_some();
    if v.vin.is_none() && v.vehicle_id.is_none() && !ymm {
        check.problems.push(
            "",
            "give the vehicle: vin, vehicle_id, or year, make and model",
        );
    }
}

/// The vehicle as the scheduler wants it: VIN and/or year, make, model.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct VehicleRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl VehicleRef {
    /// An availability request for this vehicle.
    pub fn request<'a>(
        &'a self,
        codes: &'a [String],
        from: NaiveDate,
        to: NaiveDate,
    ) -> SlotRequest<'a> {
        SlotRequest {
            service_codes: codes,
            from,
            to,
            vin: self.vin.as_deref(),
            year: self.year,
            make: self.make.as_deref(),
            model: self.model.as_deref(),
        }
    }
}

/// The vehicle, with what inventory lists for a `vehicle_id` filled in.
pub async fn resolve_vehicle(
    ctx: &ToolContext<'_>,
    args: &VehicleQuery<'_>,
) -> Result<VehicleRef, HandlerError> {
    let mut vehicle = VehicleRef {
        vin: args.vin.map(vin::normalize),
        year: args.year,
        make: args.make.map(str::to_owned),
        model: args.model.map(str::to_owned),
    };
    let Some(id) = args.vehicle_id else {
        return Ok(vehicle);
    };
    let snapshot = ctx.adapter(Domain::Inventory)?.inventory().await?;
    match snapshot.lookup(UnitRef::Id(id)) {
        Lookup::Listed(v) => {
            vehicle.vin = vehicle.vin.or_else(|| v.vin.clone());
            vehicle.year = vehicle.year.or(v.year);
            vehicle.make = vehicle.make.or_else(|| v.make.clone());
            vehicle.model = vehicle.model.or_else(|| v.model.clone());
            Ok(vehicle)
        }
        Lookup::Sold | Lookup::NotFound => Err(ToolError::invalid_arguments(vec![Problem::new(
            "/vehicle_id",
            "this dealership lists no vehicle with this id",
        )])
        .into()),
    }
}

/// Refuses codes that are not on the dealership's menu (when the upstream has one).
pub async fn check_codes(ctx: &ToolContext<'_>, codes: &[String]) -> Result<(), HandlerError> {
    let menu = match ctx.adapter(Domain::Service)?.service_menu().await {
        Ok(menu) => menu,
        // Without a menu operation the scheduler itself judges the codes.
        Err(AdapterError::Unsupported) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let known = |c: &str| menu.iter().any(|m| m.code.eq_ignore_ascii_case(c));
    let problems: Vec<Problem> = codes
        .iter()
        .enumerate()
        .filter(|(_, c)| !known(c))
        .map(|(i, _)| {
            Problem::new(
                format!("/service_codes/{i}"),
                "is not on this dealership's service menu",
            )
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
    Err(error
        .with_hint("Pick codes from details.service_menu.")
        .into())
}

//! `service.check_availability`: open service slots for a set of service codes
//! and a vehicle, in the dealership's time zone.

use chrono::Utc;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::slots::{SlotView, free_slots, slot_view};
use super::vehicle::{ServiceCode, VehicleQuery, check_codes, check_vehicle, resolve_vehicle};
use crate::contract::error::ToolError;
use crate::model::Domain;
use crate::tools::{Check, Handled, ToolArgs, ToolContext};
use crate::tools::{iso_date, to_result};

/// The widest date range one call may ask for.
const MAX_DAYS: i64 = 31;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AvailabilityArgs {
    pub dealership_id: String,
    /// From the dealership's service menu, e.g. `01LOF`.
    #[schemars(length(min = 1, max = 10))]
    pub service_codes: Vec<ServiceCode>,
    /// Or give `vehicle_id`, or year, make and model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    /// From inventory_search.
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
    /// First day, `YYYY-MM-DD`, dealership time; not in the past.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub from: String,
    /// Last day (inclusive); at most 31 days after `from`.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub to: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AvailabilityResult {
    /// Open slots, earliest first.
    pub items: Vec<SlotView>,
    /// Always false: every open slot in the range is on the one page.
    pub has_more: bool,
    /// Open slots listed.
    pub total: u64,
    /// The dealership's IANA time zone; slot times carry its offset.
    pub timezone: String,
}

impl ToolArgs for AvailabilityArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        check_vehicle(&self.vehicle(), check);
        let (from, to) = (iso_date(&self.from), iso_date(&self.to));
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

impl AvailabilityArgs {
    pub(super) fn vehicle(&self) -> VehicleQuery<'_> {
        VehicleQuery {
            vin: self.vin.as_deref(),
            vehicle_id: self.vehicle_id.as_deref(),
            year: self.year,
            make: self.make.as_deref(),
            model: self.model.as_deref(),
        }
    }
}

pub async fn check_availability(ctx: ToolContext<'_>, args: AvailabilityArgs) -> Handled {
    let dealership = ctx.dealership()?;
    let adapter = ctx.adapter(Domain::Service)?;
    let vehicle = resolve_vehicle(&ctx, &args.vehicle()).await?;
    let codes: Vec<String> = args.service_codes.iter().map(|c| c.0.clone()).collect();
    check_codes(&ctx, &codes).await?;
    let (Some(from), Some(to)) = (iso_date(&args.from), iso_date(&args.to)) else {
        return Err(ToolError::internal().into());
    };
    let slots = free_slots(&ctx, adapter, &vehicle.request(&codes, from, to)).await?;
    let tz = dealership.timezone;
    let items: Vec<SlotView> = slots.into_iter().map(|s| slot_view(s, tz)).collect();
    to_result(&AvailabilityResult {
        has_more: false,
        total: items.len() as u64,
        items,
        timezone: dealership.profile.timezone.clone(),
    })
}

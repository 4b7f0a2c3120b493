//! `deals.request_trade_value`: a trade-in range for a VIN and an odometer
//! reading, from the dealership's valuation provider.

use chrono::{SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::adapters::{TradeValueRequest, UpstreamAdapter};
use crate::contract::error::{ErrorCode, ToolError};
use crate::model::{Domain, Mileage, Money, vin};
use crate::tools::leads::WearCondition;
use crate::tools::to_result;
use crate::tools::{Check, Handled, ToolArgs, ToolContext};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TradeValueArgs {
    pub dealership_id: String,
    pub vin: String,
    /// The odometer reading.
    pub mileage: Mileage,
    /// Default: the dealership's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^\d{5}(-\d{4})?$"))]
    pub zip: Option<String>,
    /// The customer's view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<WearCondition>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TradeValueResult {
    pub vin: String,
    /// The valuation provider (e.g. `blackbook`).
    pub provider: String,
    pub vehicle: ValuedVehicle,
    /// Trade-in values: `low` (rough condition), `average`, `high` (clean).
    pub trade_in: TradeInRange,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<WearCondition>,
    /// The value for `condition`, when given: excellent and good → high, fair → average, poor → low.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Money>,
    pub mileage: Mileage,
    pub valued_at: String,
    /// An estimate, not an offer: the dealership appraises the car before it buys.
    pub valid_until: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ValuedVehicle {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TradeInRange {
    pub low: Money,
    pub average: Money,
    pub high: Money,
}

impl ToolArgs for TradeValueArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        check.vin("/vin", &self.vin);
        if self.mileage.in_miles() > 2_000_000 {
            check
                .problems
                .push("/mileage/value", "is not a plausible odometer reading");
        }
    }
}

pub async fn request_trade_value(ctx: ToolContext<'_>, args: TradeValueArgs) -> Handled {
    let dealership = ctx.dealership()?;
    let vin = vin::normalize(&args.vin);
    let zip = args
        .zip
        .clone()
        .unwrap_or_else(|| dealership.profile.address.postal_code.clone());
    let request = TradeValueRequest {
        vin: &vin,
        mileage_mi: args.mileage.in_miles(),
        zip: &zip,
    };
    // Before the provider's answer, which dates its validity from its own now.
    let now = Utc::now();
    let valuation = ctx
        .adapter(Domain::Deals)?
        .trade_value(&request)
        .await?
        .ok_or_else(unavailable)?;
    let value = args.condition.map(|c| match c {
        WearCondition::Excellent | WearCondition::Good => valuation.clean.clone(),
        WearCondition::Fair => valuation.average.clone(),
        WearCondition::Poor => valuation.rough.clone(),
    });
    let stamp = |t: chrono::DateTime<Utc>| {
        t.with_timezone(&dealership.timezone)
            .to_rfc3339_opts(SecondsFormat::Secs, false)
    };
    to_result(&TradeValueResult {
        vin,
        provider: valuation.provider,
        vehicle: ValuedVehicle {
            year: valuation.year,
            make: valuation.make,
            model: valuation.model,
            series: valuation.series,
            style: valuation.style,
        },
        trade_in: TradeInRange {
            low: valuation.rough,
            average: valuation.average,
            high: valuation.clean,
        },
        condition: args.condition,
        value,
        mileage: args.mileage,
        valued_at: stamp(now),
        valid_until: stamp(valuation.valid_until),
    })
}

fn unavailable() -> ToolError {
    ToolError::new(
        ErrorCode::DealsTradeValueUnavailable,
        "The valuation provider has no values for this vehicle.",
    )
    // No ready call: a lead needs the customer and their consent, which this
    // call never had, and a suggestion must work as given.
    .with_hint(
        "Send a lead (leads_create) with the customer, their consent and the trade-in, so the dealership appraises it in person.",
    )
}

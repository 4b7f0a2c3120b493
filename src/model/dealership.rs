//! A dealership's public profile, from configuration (never from a caller).

use chrono::NaiveTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Postal address.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    pub line1: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line2: Option<String>,
    pub city: String,
    /// State or province code.
    pub region: String,
    pub postal_code: String,
    /// ISO 3166-1 alpha-2.
    pub country: String,
}

/// A charge the dealership adds to every vehicle it sells (a documentation
/// fee, a required add-on): disclosed as the dealership's default, never
/// added to a vehicle's `price`, which includes it already.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DealerFee {
    /// What the buyer sees, e.g. `Documentation fee`.
    pub name: String,
    pub amount: super::Money,
}

/// Coordinates in decimal degrees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Geo {
    pub latitude: f64,
    pub longitude: f64,
}

/// A named phone number in E.164.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Phone {
    /// What the number is for, e.g. `sales`, `service`.
    pub name: String,
    #[schemars(regex(pattern = r"^\+[1-9]\d{1,14}$"))]
    pub number: String,
}

/// Opening hours of one department; days without hours are closed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Hours {
    /// Department, e.g. `sales`, `service`.
    pub department: String,
    /// Local opening hours per day, `"09:00-19:00"`, keyed `monday`..`sunday`.
    pub weekly: std::collections::BTreeMap<Weekday, String>,
}

impl Hours {
    /// When the department opens and closes on `day`; `None` when closed.
    pub fn on(&self, day: Weekday) -> Option<(NaiveTime, NaiveTime)> {
        opening_span(self.weekly.get(&day)?)
    }
}

/// A day's `"09:00-19:00"` (a one-digit hour reads too) as opening and
/// closing times, closing after opening; `None` for anything else.
pub fn opening_span(range: &str) -> Option<(NaiveTime, NaiveTime)> {
    let (open, close) = range.split_once('-')?;
    let parse = |t: &str| NaiveTime::parse_from_str(t.trim(), "%H:%M").ok();
    let (open, close) = (parse(open)?, parse(close)?);
    (open < close).then_some((open, close))
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Weekday {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

/// Canonical domains a dealership can route to an upstream.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    Inventory,
    Leads,
    Service,
    // Repair orders live in the DMS, often a different system than the
    // scheduler. (A plain comment: a doc comment would turn the schema's enum into oneOf.)
    RepairOrders,
    Deals,
}

impl Domain {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inventory => "inventory",
            Self::Leads => "leads",
            Self::Service => "service",
            Self::RepairOrders => "repair_orders",
            Self::Deals => "deals",
        }
    }
}

/// What `dealership.get` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DealershipProfile {
    pub id: String,
    /// Trade name shown to shoppers.
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legal_name: Option<String>,
    pub address: Address,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geo: Option<Geo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phones: Vec<Phone>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    /// IANA time zone, e.g. `America/Chicago`.
    pub timezone: String,
    /// ISO 4217 currency of the dealership's prices.
    pub currency: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brands: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hours: Vec<Hours>,
    /// Domains this dealership serves through the bridge.
    pub domains: Vec<Domain>,
    /// Things shoppers can do here, e.g. `test_drive`, `financing`, `trade_in`, `service`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// The dealership's mandatory charges, already in every `price`: absent
    /// when the dealer has not disclosed them, `[]` when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fees: Option<Vec<DealerFee>>,
}

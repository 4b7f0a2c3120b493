//! Repair orders as every adapter kind reports them: the canonical model the
//! `service.*_repair_order*` tools present, whatever the DMS called things.

use chrono::{DateTime, FixedOffset, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{Mileage, Money};

/// Where a repair order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoStatus {
    /// Written up, no work started.
    Open,
    /// A technician is working on at least one job.
    InProgress,
    /// Work finished and the order closed (or invoiced).
    Closed,
}

impl RoStatus {
    pub const ALL: [RoStatus; 3] = [Self::Open, Self::InProgress, Self::Closed];

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The status as the wire and the store write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::InProgress => "in_progress",
            Self::Closed => "closed",
        }
    }

    /// Open and in-progress orders are both work in progress at the DMS.
    pub fn is_open(self) -> bool {
        self != Self::Closed
    }
}

/// Where one job line stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    NotStarted,
    InProgress,
    /// Waiting for parts, approval or the customer.
    OnHold,
    Completed,
    /// The DMS sent a status the mapping does not know.
    Unknown,
}

impl JobStatus {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "not_started" => Some(Self::NotStarted),
            "in_progress" => Some(Self::InProgress),
            "on_hold" => Some(Self::OnHold),
            "completed" => Some(Self::Completed),
            "unknown" => Some(Self::Unknown),
            _ => None,
        }
    }
}

/// Who pays for a line or a total.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PayType {
    Customer,
    Warranty,
    Internal,
    Insurance,
    ServiceContract,
    Other,
}

impl PayType {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "customer" => Some(Self::Customer),
            "warranty" => Some(Self::Warranty),
            "internal" => Some(Self::Internal),
            "insurance" => Some(Self::Insurance),
            "service_contract" => Some(Self::ServiceContract),
            "other" => Some(Self::Other),
            _ => None,
        }
    }
}

/// One repair order, in the dealership's time zone and currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairOrder {
    pub ro_number: String,
    /// The DMS's own key, when it has one besides the RO number.
    pub repair_order_id: Option<String>,
    pub status: RoStatus,
    pub opened_at: Option<DateTime<FixedOffset>>,
    pub promised_at: Option<DateTime<FixedOffset>>,
    pub closed_at: Option<DateTime<FixedOffset>>,
    /// The service advisor's name (staff, not customer data).
    pub advisor: Option<String>,
    pub vehicle: RoVehicle,
    /// The customer's name, only ever shown as initials.
    pub customer_name: Option<String>,
    pub jobs: Vec<RoJob>,
    /// Sums per pay type, in minor units of the dealership's currency.
    pub totals: Vec<PayTotal>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoVehicle {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mileage_in: Option<Mileage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mileage_out: Option<Mileage>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoJob {
    /// The line letter or number on the order (`A`, `1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<JobStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pay_type: Option<PayType>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PayTotal {
    pub pay_type: PayType,
    /// Labor + parts + other + tax, or the DMS's own total when it gives one.
    pub total: Money,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labor: Option<Money>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Money>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax: Option<Money>,
}

/// Which repair orders to read. Dates are the dealership's local days, inclusive.
#[derive(Debug, Clone)]
pub struct RoQuery<'a> {
    pub statuses: &'a [RoStatus],
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub vin: Option<&'a str>,
    /// Ask the DMS even when an identical read was answered moments ago (the
    /// repair-order watch, whose point is to see change); the answer then
    /// replaces the kept one.
    pub fresh: bool,
}

impl RoQuery<'_> {
    /// Whether `ro` answers the query. Adapters may ask the DMS for more (a
    /// vendor's date filter means something slightly different); this decides.
    pub fn matches(&self, ro: &RepairOrder, tz: chrono_tz::Tz) -> bool {
        if !self.statuses.contains(&ro.status) {
            return false;
        }
        if let Some(vin) = self.vin
            && ro.vehicle.vin.as_deref() != Some(vin)
        {
            return false;
        }
        // Closed orders count on the day they closed, others on the day they opened;
        // an open order without a date is still open work and always shown.
        let day = match ro.status {
            RoStatus::Closed => ro.closed_at.or(ro.opened_at),
            RoStatus::Open | RoStatus::InProgress => ro.opened_at,
        };
        day.map(|t| t.with_timezone(&tz).date_naive())
            .is_none_or(|d| d >= self.from && d <= self.to)
    }
}

/// One repair order asked for by its RO number or the DMS's own id.
#[derive(Debug, Clone, Copy)]
pub enum RoRef<'a> {
    Number(&'a str),
    Id(&'a str),
}

impl RoRef<'_> {
    pub fn matches(&self, ro: &RepairOrder) -> bool {
        match self {
            Self::Number(n) => ro.ro_number.eq_ignore_ascii_case(n),
            Self::Id(id) => ro.repair_order_id.as_deref() == Some(*id),
        }
    }
}

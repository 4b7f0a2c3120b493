//! Arguments and results of the inventory tools.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{Condition, Mileage, Money, Vehicle, VehicleStatus};

/// A list matches any of its values.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Filters {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub condition: Vec<Condition>,
    /// Default: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status: Vec<VehicleStatus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub make: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trim: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fuel: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transmission: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drivetrain: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exterior_color: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interior_color: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1900, max = 2100))]
    pub year_min: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1900, max = 2100))]
    pub year_max: Option<i32>,
    /// Inclusive, on the final `price`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_min: Option<Money>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_max: Option<Money>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mileage_max: Option<Mileage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub stock: Option<String>,
    /// Free text; every word must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 200))]
    pub query: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortField {
    /// Final price.
    Price,
    /// Advertised base price.
    ListPrice,
    Msrp,
    Mileage,
    Year,
    Make,
    Model,
    /// The dealership's stock number, as text.
    Stock,
    DaysInStock,
    LastVerifiedAt,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    #[default]
    Asc,
    Desc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sort {
    pub field: SortField,
    #[serde(default)]
    pub order: SortOrder,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    #[schemars(length(min = 1, max = 64))]
    pub dealership_id: String,
    #[serde(default)]
    pub filters: Filters,
    /// Default: fewest days in stock first.
    #[serde(default)]
    pub sort: Option<Sort>,
    /// Page size; by default 20, at most 100.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
    /// A `next_cursor`.
    #[serde(default)]
    #[schemars(length(min = 1, max = 512))]
    pub cursor: Option<String>,
    /// Buyer's ZIP, for `offered_price`.
    #[serde(default)]
    #[schemars(regex(pattern = r"^\d{5}(-\d{4})?$"))]
    pub zip: Option<String>,
    /// `concise` (default) or `detailed`: every field.
    #[serde(default)]
    pub response_format: ResponseFormat,
}

/// How much of each record a list answer carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormat {
    // The fields to choose by.
    #[default]
    Concise,
    Detailed,
}

/// A vehicle in a concise list answer: what an agent chooses by. Every field
/// of the full record is one `inventory_get` (or `detailed`) away.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct VehicleSummary<'a> {
    pub id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stock: Option<&'a str>,
    pub status: VehicleStatus,
    pub condition: Condition,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub make: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exterior_color: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mileage: Option<Mileage>,
    /// The advertised price, mandatory dealer charges included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<&'a Money>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered_price: Option<&'a Money>,
}

impl<'a> VehicleSummary<'a> {
    pub fn of(v: &'a Vehicle) -> Self {
        Self {
            id: &v.id,
            stock: v.stock.as_deref(),
            status: v.status,
            condition: v.condition,
            year: v.year,
            make: v.make.as_deref(),
            model: v.model.as_deref(),
            trim: v.trim.as_deref(),
            exterior_color: v.exterior_color.as_deref(),
            mileage: v.mileage,
            price: v.price.as_ref(),
            offered_price: v.offered_price.as_ref(),
        }
    }
}

/// A vehicle as a search answer lists it, in the asked-for format.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Listed<'a> {
    Concise(VehicleSummary<'a>),
    Detailed(&'a Vehicle),
}

impl<'a> Listed<'a> {
    pub fn of(v: &'a Vehicle, format: ResponseFormat) -> Self {
        match format {
            ResponseFormat::Concise => Self::Concise(VehicleSummary::of(v)),
            ResponseFormat::Detailed => Self::Detailed(v),
        }
    }
}

// Borrows the vehicles from the inventory snapshot: an answer does not copy them.
// (A plain comment: a doc comment would become the schema's description.)
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchResult<'a> {
    /// Concise records; `detailed` gives every field of `inventory_get`'s `vehicle`.
    #[schemars(with = "Vec<VehicleSummary<'static>>")]
    pub items: Vec<Listed<'a>>,
    /// True when another page follows: pass `next_cursor` back as `cursor`.
    pub has_more: bool,
    /// Pass as `cursor` to get the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Vehicles matching the filters, across all pages.
    pub total: u64,
    /// The page size used.
    pub limit: u32,
    /// Present when the dealership's inventory could not be read for a while.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<StaleNotice>,
}

/// The inventory answer comes from a copy the bridge could not refresh for
/// longer than it allows (`mirror.stale_after`): availability and prices
/// may have changed since `last_synced_at`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StaleNotice {
    /// When the dealership's inventory was last read successfully.
    pub last_synced_at: chrono::DateTime<chrono::Utc>,
    pub message: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    #[schemars(length(min = 1, max = 64))]
    pub dealership_id: String,
    /// From inventory_search.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub vehicle_id: Option<String>,
    #[serde(default)]
    pub vin: Option<String>,
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub stock: Option<String>,
    #[serde(default)]
    #[schemars(regex(pattern = r"^\d{5}(-\d{4})?$"))]
    pub zip: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GetResult {
    pub vehicle: Vehicle,
    /// Present when the dealership's inventory could not be read for a while.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<StaleNotice>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FacetsArgs {
    #[schemars(length(min = 1, max = 64))]
    pub dealership_id: String,
    #[serde(default)]
    pub filters: Filters,
}

/// How many matching vehicles have a given value.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FacetCount {
    pub value: FacetValue,
    pub count: u64,
}

/// A facet value: text (make, body, …) or a number (year).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum FacetValue {
    Text(String),
    Number(i64),
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MoneyRange {
    pub min: Money,
    pub max: Money,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MileageRange {
    pub min: Mileage,
    pub max: Mileage,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct YearRange {
    pub min: i32,
    pub max: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FacetsResult {
    /// Vehicles matching the filters.
    pub total: u64,
    pub makes: Vec<FacetCount>,
    pub models: Vec<FacetCount>,
    pub trims: Vec<FacetCount>,
    pub years: Vec<FacetCount>,
    pub bodies: Vec<FacetCount>,
    pub conditions: Vec<FacetCount>,
    pub fuels: Vec<FacetCount>,
    pub transmissions: Vec<FacetCount>,
    pub drivetrains: Vec<FacetCount>,
    pub exterior_colors: Vec<FacetCount>,
    pub statuses: Vec<FacetCount>,
    /// Over the final `price`; absent when no matching vehicle has a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_range: Option<MoneyRange>,
    /// In miles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mileage_range: Option<MileageRange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year_range: Option<YearRange>,
    /// Present when the dealership's inventory could not be read for a while.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<StaleNotice>,
}

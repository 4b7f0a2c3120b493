//! The canonical vehicle every inventory adapter maps into.

use chrono::{DateTime, FixedOffset, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Mileage, Money, Photos};

/// Sales condition, the AAP v1.0 vocabulary.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    New,
    Used,
    /// Certified pre-owned.
    Cpo,
}

/// Availability of a listed vehicle. Sold units are never listed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum VehicleStatus {
    /// On the lot and for sale.
    Available,
    /// Allocated to the dealership, not yet delivered.
    InTransit,
    /// A deal is pending; may still become available.
    Pending,
}

/// A vehicle offered by one dealership.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Vehicle {
    /// Stable id, unique within the dealership. Not the VIN: use `vin` for that.
    pub id: String,
    pub dealership_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    /// The dealership's stock number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stock: Option<String>,
    pub status: VehicleStatus,
    pub condition: Condition,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub make: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<String>,
    /// Body style, e.g. `SUV`, `Sedan`, `Pickup`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transmission: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drivetrain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doors: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exterior_color: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interior_color: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mileage: Option<Mileage>,
    /// The advertised price, every mandatory dealer charge and required add-on in it,
    /// tax and government fees not (AAP v1.3): the only price filters use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<Money>,
    /// Advertised base price before mandatory fees and add-ons.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_price: Option<Money>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msrp: Option<Money>,
    /// Price for the buyer's `zip`; present only when a zip was given and the upstream desks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered_price: Option<Money>,
    /// Date the unit entered the dealership's stock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inventory_date: Option<NaiveDate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub days_in_stock: Option<u32>,
    #[serde(default, skip_serializing_if = "Photos::is_empty")]
    pub photos: Photos,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vdp_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When the upstream last confirmed this listing's availability, price and status.
    pub last_verified_at: DateTime<FixedOffset>,
}

impl Vehicle {
    /// The lower-cased words free-text search looks in: make, model, trim,
    /// body, fuel, colours, description, stock number, VIN and year.
    pub fn searchable_text(&self) -> String {
        let year = self.year.map(|y| y.to_string());
        [
            &self.make,
            &self.model,
            &self.trim,
            &self.body,
            &self.fuel,
            &self.exterior_color,
            &self.interior_color,
            &self.description,
            &self.stock,
            &self.vin,
            &year,
        ]
        .into_iter()
        .flatten()
        .map(|s| s.to_lowercase())
        .collect::<Vec<_>>()
        .join(" ")
    }
}

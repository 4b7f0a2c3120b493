//! Trade-in valuations as every adapter kind reports them.

use crate::model::Money;

/// What the caller wants valued.
#[derive(Debug, Clone)]
pub struct TradeValueRequest<'a> {
    /// Normalised (upper-case) and check-digit verified.
    pub vin: &'a str,
    pub mileage_mi: u64,
    /// The customer's ZIP code, else the dealership's.
    pub zip: &'a str,
}

/// A provider's trade-in range for one vehicle, in the dealership's currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Valuation {
    /// The provider's name (the profile's), shown to the caller.
    pub provider: String,
    pub year: Option<i32>,
    pub make: Option<String>,
    pub model: Option<String>,
    /// Trim / series.
    pub series: Option<String>,
    pub style: Option<String>,
    /// Trade-in value in rough, average and clean condition.
    pub rough: Money,
    pub average: Money,
    pub clean: Money,
    /// Until when the provider's values hold (its own date, or its refresh cycle).
    pub valid_until: chrono::DateTime<chrono::Utc>,
}

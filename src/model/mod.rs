//! The canonical data model shared by tools and adapters.

pub mod crm;
pub mod dealership;
pub mod event;
pub mod mileage;
pub mod money;
pub mod photos;
pub mod repair_order;
pub mod service;
pub mod valuation;
pub mod vehicle;
pub mod vin;

pub use dealership::{DealerFee, DealershipProfile, Domain};
pub use mileage::{DistanceUnit, Mileage};
pub use money::{AmountUnit, Money};
pub use photos::Photos;
pub use vehicle::{Condition, Vehicle, VehicleStatus};

//! A dealership's inventory as last read from its upstream.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::mapping::MappedUnit;
use crate::model::Vehicle;

/// A unit the upstream reports as sold or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SoldUnit {
    pub id: String,
    pub vin: Option<String>,
    pub stock: Option<String>,
}

/// Listed vehicles and known-sold units, as of `fetched_at`.
#[derive(Debug, Clone, Default)]
pub struct InventorySnapshot {
    pub listed: Vec<Arc<Vehicle>>,
    pub sold: Vec<SoldUnit>,
    pub fetched_at: Option<DateTime<Utc>>,
}

/// Result of looking a unit up by id, VIN or stock number.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup<'a> {
    Listed(&'a Arc<Vehicle>),
    Sold,
    NotFound,
}

/// How a caller names a unit.
#[derive(Debug, Clone, Copy)]
pub enum UnitRef<'a> {
    Id(&'a str),
    Vin(&'a str),
    Stock(&'a str),
}

impl InventorySnapshot {
    pub fn from_units(
        units: impl IntoIterator<Item = MappedUnit>,
        fetched_at: DateTime<Utc>,
    ) -> Self {
        let mut snapshot = Self {
            fetched_at: Some(fetched_at),
            ..Self::default()
        };
        for unit in units {
            match unit {
                MappedUnit::Listed(v) => snapshot.listed.push(Arc::from(v)),
                MappedUnit::Sold { id, vin, stock } => {
                    snapshot.sold.push(SoldUnit { id, vin, stock })
                }
            }
        }
        snapshot
    }

    pub fn lookup(&self, unit: UnitRef<'_>) -> Lookup<'_> {
        let listed = self.listed.iter().find(|v| match unit {
            UnitRef::Id(id) => v.id == id,
            UnitRef::Vin(vin) => v
                .vin
                .as_deref()
                .is_some_and(|x| x.eq_ignore_ascii_case(vin)),
            UnitRef::Stock(stock) => v
                .stock
                .as_deref()
                .is_some_and(|x| x.eq_ignore_ascii_case(stock)),
        });
        if let Some(v) = listed {
            return Lookup::Listed(v);
        }
        let sold = self.sold.iter().any(|s| match unit {
            UnitRef::Id(id) => s.id == id,
            UnitRef::Vin(vin) => s
                .vin
                .as_deref()
                .is_some_and(|x| x.eq_ignore_ascii_case(vin)),
            UnitRef::Stock(stock) => s
                .stock
                .as_deref()
                .is_some_and(|x| x.eq_ignore_ascii_case(stock)),
        });
        if sold { Lookup::Sold } else { Lookup::NotFound }
    }
}

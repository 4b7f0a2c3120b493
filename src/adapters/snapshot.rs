//! A dealership's inventory as last read from its upstream.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::mapping::MappedUnit;
use super::search_index::SearchIndex;
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
    /// Lookups by id, VIN and stock number; empty until [`Self::indexed`].
    index: UnitIndex,
    /// The listed units as search columns: built by [`Self::indexed`], else
    /// on the first search.
    search: std::sync::OnceLock<SearchIndex>,
}

/// Where each identifier points: `Ok(i)` is `listed[i]`, `Err(i)` is `sold[i]`.
/// VINs and stock numbers are kept upper-case (they compare case-blind).
#[derive(Debug, Clone, Default)]
struct UnitIndex {
    built: bool,
    by_id: HashMap<String, Result<usize, usize>>,
    by_vin: HashMap<String, Result<usize, usize>>,
    by_stock: HashMap<String, Result<usize, usize>>,
    /// Each listed unit's [`Vehicle::searchable_text`], by position.
    texts: Vec<Box<str>>,
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

    /// A snapshot of `listed` and `sold` (a listed unit wins over a sold one).
    pub fn new(
        listed: Vec<Arc<Vehicle>>,
        sold: Vec<SoldUnit>,
        fetched_at: Option<DateTime<Utc>>,
    ) -> Self {
        Self {
            listed,
            sold,
            fetched_at,
            index: UnitIndex::default(),
            search: std::sync::OnceLock::new(),
        }
    }

    /// The same snapshot with O(1) lookups, for copies read many times.
    pub fn indexed(mut self) -> Self {
        let mut index = UnitIndex {
            built: true,
            ..UnitIndex::default()
        };
        // Sold first, so that a listed unit with the same identifier replaces it.
        let sold = self
            .sold
            .iter()
            .enumerate()
            .map(|(i, s)| (Err(i), s.id.as_str(), s.vin.as_deref(), s.stock.as_deref()));
        let listed = self
            .listed
            .iter()
            .enumerate()
            .map(|(i, v)| (Ok(i), v.id.as_str(), v.vin.as_deref(), v.stock.as_deref()));
        for (at, id, vin, stock) in sold.chain(listed) {
            index.by_id.insert(id.to_owned(), at);
            if let Some(vin) = vin {
                index.by_vin.insert(vin.to_ascii_uppercase(), at);
            }
            if let Some(stock) = stock {
                index.by_stock.insert(stock.to_ascii_uppercase(), at);
            }
        }
        index.texts = self
            .listed
            .iter()
            .map(|v| v.searchable_text().into_boxed_str())
            .collect();
        self.index = index;
        self.search = std::sync::OnceLock::from(SearchIndex::build(&self.listed));
        self
    }

    /// The listed units as search columns (see [`SearchIndex`]).
    pub fn search_index(&self) -> &SearchIndex {
        self.search.get_or_init(|| SearchIndex::build(&self.listed))
    }

    /// The free-text search text of `listed[i]`: kept by [`Self::indexed`]
    /// copies, computed for others.
    pub fn search_text(&self, i: usize) -> std::borrow::Cow<'_, str> {
        match self.index.texts.get(i) {
            Some(text) => std::borrow::Cow::Borrowed(text),
            None => self
                .listed
                .get(i)
                .map(|v| std::borrow::Cow::Owned(v.searchable_text()))
                .unwrap_or_default(),
        }
    }

    pub fn lookup(&self, unit: UnitRef<'_>) -> Lookup<'_> {
        if self.index.built {
            let found = match unit {
                UnitRef::Id(id) => self.index.by_id.get(id),
                UnitRef::Vin(vin) => self.index.by_vin.get(&vin.to_ascii_uppercase()),
                UnitRef::Stock(stock) => self.index.by_stock.get(&stock.to_ascii_uppercase()),
            };
            return match found.copied() {
                Some(Ok(i)) => self.listed.get(i).map_or(Lookup::NotFound, Lookup::Listed),
                Some(Err(_)) => Lookup::Sold,
                None => Lookup::NotFound,
            };
        }
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

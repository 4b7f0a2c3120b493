//! A copy's listed units as columns, for searches that filter and sort
//! without reading each vehicle.
//!
//! A search used to test every vehicle against the filters and sort the
//! matches: fine for a rooftop's few hundred units, 11.7 ms at p50 for a
//! 50,000-unit copy (a group's combined inventory, a marketplace feed), whose
//! 200 MB of vehicles do not fit the CPU's caches. Here each filterable field
//! is a column of small values (text fields as ids into a per-copy
//! dictionary), scanned in a few microseconds per thousand units, and each
//! sort order is computed once per copy, the first time a search asks for it.
//! What a filter or an order means stays in `tools::inventory::query`; this
//! module only keeps the columns and the orders.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use crate::model::{Condition, Vehicle, VehicleStatus};

/// The text fields a search filters on, in column order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextField {
    Make,
    Model,
    Trim,
    Body,
    Fuel,
    Transmission,
    Drivetrain,
    ExteriorColor,
    InteriorColor,
}

impl TextField {
    pub const ALL: [TextField; 9] = [
        Self::Make,
        Self::Model,
        Self::Trim,
        Self::Body,
        Self::Fuel,
        Self::Transmission,
        Self::Drivetrain,
        Self::ExteriorColor,
        Self::InteriorColor,
    ];

    pub fn of(self, v: &Vehicle) -> Option<&str> {
        match self {
            Self::Make => v.make.as_deref(),
            Self::Model => v.model.as_deref(),
            Self::Trim => v.trim.as_deref(),
            Self::Body => v.body.as_deref(),
            Self::Fuel => v.fuel.as_deref(),
            Self::Transmission => v.transmission.as_deref(),
            Self::Drivetrain => v.drivetrain.as_deref(),
            Self::ExteriorColor => v.exterior_color.as_deref(),
            Self::InteriorColor => v.interior_color.as_deref(),
        }
    }
}

/// How many sort orders a copy may keep (see [`SearchIndex::order`]).
pub const ORDER_SLOTS: usize = 16;

/// The columns of one copy's listed units, by position in `listed`.
// No `Default`: `text` expects one column per field, which only `build` makes.
#[derive(Debug, Clone)]
pub struct SearchIndex {
    text: Vec<TextColumn>,
    pub condition: Vec<Condition>,
    pub status: Vec<VehicleStatus>,
    pub year: Vec<Option<i32>>,
    /// Final price, in minor units.
    pub price: Vec<Option<i64>>,
    /// Odometer, in miles.
    pub miles: Vec<Option<u64>>,
    orders: [OnceLock<Box<[u32]>>; ORDER_SLOTS],
}

/// One text field: each unit's value as an id into the copy's dictionary of
/// that field's values, compared trimmed and ASCII case-blind.
#[derive(Debug, Default, Clone)]
pub struct TextColumn {
    ids: Vec<u32>,
    dictionary: HashMap<Box<str>, u32>,
}

/// The id of a unit without a value.
const NO_VALUE: u32 = u32::MAX;

impl TextColumn {
    fn build<'a>(values: impl Iterator<Item = Option<&'a str>>) -> Self {
        let mut column = Self::default();
        for value in values {
            let id = match value {
                Some(text) => {
                    let next = column.dictionary.len() as u32;
                    *column.dictionary.entry(fold(text)).or_insert(next)
                }
                None => NO_VALUE,
            };
            column.ids.push(id);
        }
        column.ids.shrink_to_fit();
        column
    }

    /// The ids of the values any of `wanted` names (none when none is listed).
    pub fn ids_of(&self, wanted: &[String]) -> Vec<u32> {
        wanted
            .iter()
            .filter_map(|w| self.dictionary.get(&*fold(w)).copied())
            .collect()
    }

    /// The unit's value id; `None` when it has no value.
    pub fn id(&self, unit: usize) -> Option<u32> {
        self.ids.get(unit).copied().filter(|id| *id != NO_VALUE)
    }
}

/// Trimmed and ASCII-lowercased: two values are equal this way exactly when
/// their trimmed forms are `eq_ignore_ascii_case`.
fn fold(text: &str) -> Box<str> {
    text.trim().to_ascii_lowercase().into_boxed_str()
}

impl SearchIndex {
    pub fn build(listed: &[std::sync::Arc<Vehicle>]) -> Self {
        let column = |field: TextField| TextColumn::build(listed.iter().map(|v| field.of(v)));
        Self {
            text: TextField::ALL.into_iter().map(column).collect(),
            condition: listed.iter().map(|v| v.condition).collect(),
            status: listed.iter().map(|v| v.status).collect(),
            year: listed.iter().map(|v| v.year).collect(),
            price: listed
                .iter()
                .map(|v| v.price.as_ref().map(|m| m.amount))
                .collect(),
            miles: listed
                .iter()
                .map(|v| v.mileage.map(|m| m.in_miles()))
                .collect(),
            orders: Default::default(),
        }
    }

    pub fn text(&self, field: TextField) -> &TextColumn {
        // Built with one column per field, in `TextField::ALL` order.
        &self.text[field as usize]
    }

    /// The order kept in `slot`, computed by `compute` (every listed unit's
    /// position, in order) the first time it is asked for. Each caller owns
    /// its slots' meaning; a slot past [`ORDER_SLOTS`] is computed every time.
    pub fn order(&self, slot: usize, compute: impl FnOnce() -> Vec<u32>) -> Cow<'_, [u32]> {
        match self.orders.get(slot) {
            Some(kept) => Cow::Borrowed(kept.get_or_init(|| compute().into_boxed_slice())),
            None => Cow::Owned(compute()),
        }
    }
}

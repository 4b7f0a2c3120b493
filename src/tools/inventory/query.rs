//! Filtering, sorting and facet counting over a dealership's listed vehicles.
//! Upstreams rarely filter the way AAP asks, so the bridge does it here, the
//! same way for every adapter.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::args::{
    FacetCount, FacetValue, FacetsResult, Filters, MileageRange, MoneyRange, Sort, SortField,
    SortOrder, YearRange,
};
use crate::adapters::InventorySnapshot;
use crate::adapters::search_index::{SearchIndex, TextField};
use crate::model::{DistanceUnit, Mileage, Money, Vehicle};

/// Listed vehicles matching `filters`, in `sort` order (default: fewest days
/// in stock first, ties by id). The filters run over the copy's search
/// columns, and the order is the copy's, kept once computed (see
/// `adapters::search_index`), so no search sorts.
pub fn select<'a>(
    inventory: &'a InventorySnapshot,
    filters: &Filters,
    sort: Option<Sort>,
) -> Vec<&'a Vehicle> {
    let listed = &inventory.listed;
    let index = inventory.search_index();
    let mut wanted = vec![true; listed.len()];
    narrow_by_columns(&mut wanted, index, filters);
    narrow_by_identifiers(&mut wanted, listed, filters);
    narrow_by_words(&mut wanted, inventory, filters);
    let sort = sort.unwrap_or(Sort {
        field: SortField::DaysInStock,
        order: SortOrder::Asc,
    });
    let order = index.order(order_slot(sort), || sorted(listed, sort));
    order
        .iter()
        .map(|&i| i as usize)
        .filter(|&i| wanted.get(i).copied().unwrap_or(false))
        .filter_map(|i| listed.get(i).map(|v| &**v))
        .collect()
}

/// Keeps only the units for which `test(i)` holds.
fn keep(wanted: &mut [bool], test: impl Fn(usize) -> bool) {
    for (i, w) in wanted.iter_mut().enumerate() {
        *w = *w && test(i);
    }
}

fn narrow_by_columns(wanted: &mut [bool], index: &SearchIndex, f: &Filters) {
    if !f.condition.is_empty() {
        keep(wanted, |i| f.condition.contains(&index.condition[i]));
    }
    if !f.status.is_empty() {
        keep(wanted, |i| f.status.contains(&index.status[i]));
    }
    let texts = [
        (TextField::Make, &f.make),
        (TextField::Model, &f.model),
        (TextField::Trim, &f.trim),
        (TextField::Body, &f.body),
        (TextField::Fuel, &f.fuel),
        (TextField::Transmission, &f.transmission),
        (TextField::Drivetrain, &f.drivetrain),
        (TextField::ExteriorColor, &f.exterior_color),
        (TextField::InteriorColor, &f.interior_color),
    ];
    for (field, values) in texts.into_iter().filter(|(_, v)| !v.is_empty()) {
        let column = index.text(field);
        let ids = column.ids_of(values);
        keep(wanted, |i| column.id(i).is_some_and(|id| ids.contains(&id)));
    }
    let within = |value: Option<i64>, min: Option<i64>, max: Option<i64>| {
        value.is_some_and(|v| min.is_none_or(|m| v >= m) && max.is_none_or(|m| v <= m))
    };
    if f.year_min.is_some() || f.year_max.is_some() {
        let (min, max) = (f.year_min.map(i64::from), f.year_max.map(i64::from));
        keep(wanted, |i| within(index.year[i].map(i64::from), min, max));
    }
    if f.price_min.is_some() || f.price_max.is_some() {
        let amount = |m: &Option<Money>| m.as_ref().map(|m| m.amount);
        let (min, max) = (amount(&f.price_min), amount(&f.price_max));
        keep(wanted, |i| within(index.price[i], min, max));
    }
    if let Some(max) = f.mileage_max {
        let max = max.in_miles();
        keep(wanted, |i| index.miles[i].is_some_and(|m| m <= max));
    }
}

/// VIN and stock number, compared with each unit's own (case-blind).
fn narrow_by_identifiers(wanted: &mut [bool], listed: &[Arc<Vehicle>], f: &Filters) {
    let same = |have: &Option<String>, given: &str| {
        have.as_deref()
            .is_some_and(|x| x.eq_ignore_ascii_case(given.trim()))
    };
    if let Some(vin) = f.vin.as_deref() {
        keep(wanted, |i| same(&listed[i].vin, vin));
    }
    if let Some(stock) = f.stock.as_deref() {
        keep(wanted, |i| same(&listed[i].stock, stock));
    }
}

/// Free text: every word must appear in the unit's search text.
fn narrow_by_words(wanted: &mut [bool], inventory: &InventorySnapshot, f: &Filters) {
    let words: Vec<String> = f
        .query
        .iter()
        .flat_map(|q| q.split_whitespace())
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        return;
    }
    for (i, w) in wanted.iter_mut().enumerate().filter(|(_, w)| **w) {
        let text = inventory.search_text(i);
        *w = words.iter().all(|word| text.contains(word.as_str()));
    }
}

/// Where a copy keeps the order of `sort`: two slots (ascending, descending) per field.
fn order_slot(sort: Sort) -> usize {
    sort.field as usize * 2 + usize::from(sort.order == SortOrder::Desc)
}

/// Every listed unit's position in `sort` order, ties by id.
fn sorted(listed: &[Arc<Vehicle>], sort: Sort) -> Vec<u32> {
    let mut order: Vec<u32> = (0..listed.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&listed[a as usize], &listed[b as usize]);
        compare(a, b, sort).then_with(|| a.id.cmp(&b.id))
    });
    order
}

/// Missing values sort last in either direction.
fn compare(a: &Vehicle, b: &Vehicle, sort: Sort) -> Ordering {
    fn key<T: Ord>(a: Option<T>, b: Option<T>, order: SortOrder) -> Ordering {
        match (a, b) {
            (Some(x), Some(y)) => match order {
                SortOrder::Asc => x.cmp(&y),
                SortOrder::Desc => y.cmp(&x),
            },
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
    }
    let lower = |s: &Option<String>| s.as_ref().map(|s| s.to_lowercase());
    let o = sort.order;
    match sort.field {
        SortField::Price => key(
            a.price.as_ref().map(|m| m.amount),
            b.price.as_ref().map(|m| m.amount),
            o,
        ),
        SortField::ListPrice => key(
            a.list_price.as_ref().map(|m| m.amount),
            b.list_price.as_ref().map(|m| m.amount),
            o,
        ),
        SortField::Msrp => key(
            a.msrp.as_ref().map(|m| m.amount),
            b.msrp.as_ref().map(|m| m.amount),
            o,
        ),
        SortField::Mileage => key(
            a.mileage.map(|m| m.in_miles()),
            b.mileage.map(|m| m.in_miles()),
            o,
        ),
        SortField::Year => key(a.year, b.year, o),
        SortField::Make => key(lower(&a.make), lower(&b.make), o),
        SortField::Model => key(lower(&a.model), lower(&b.model), o),
        SortField::Stock => key(lower(&a.stock), lower(&b.stock), o),
        SortField::DaysInStock => key(a.days_in_stock, b.days_in_stock, o),
        SortField::LastVerifiedAt => key(Some(a.last_verified_at), Some(b.last_verified_at), o),
    }
}

/// Facet counts over already-filtered vehicles; values sorted by count, then value.
pub fn facets(hits: &[&Vehicle]) -> FacetsResult {
    let text = |get: fn(&Vehicle) -> Option<FacetValue>| count(hits, get);
    let prices: Vec<&Money> = hits.iter().filter_map(|v| v.price.as_ref()).collect();
    let miles: Vec<u64> = hits
        .iter()
        .filter_map(|v| v.mileage.map(|m| m.in_miles()))
        .collect();
    let years: Vec<i32> = hits.iter().filter_map(|v| v.year).collect();
    let money_range = || {
        let min = prices.iter().min_by_key(|m| m.amount)?;
        let max = prices.iter().max_by_key(|m| m.amount)?;
        Some(MoneyRange {
            min: (*min).clone(),
            max: (*max).clone(),
        })
    };
    let miles_of = |value| Mileage {
        value,
        unit: DistanceUnit::Mi,
    };
    FacetsResult {
        total: hits.len() as u64,
        makes: text(|v| v.make.clone().map(FacetValue::Text)),
        models: text(|v| v.model.clone().map(FacetValue::Text)),
        trims: text(|v| v.trim.clone().map(FacetValue::Text)),
        years: text(|v| v.year.map(|y| FacetValue::Number(y.into()))),
        bodies: text(|v| v.body.clone().map(FacetValue::Text)),
        conditions: text(|v| enum_text(v.condition)),
        fuels: text(|v| v.fuel.clone().map(FacetValue::Text)),
        transmissions: text(|v| v.transmission.clone().map(FacetValue::Text)),
        drivetrains: text(|v| v.drivetrain.clone().map(FacetValue::Text)),
        exterior_colors: text(|v| v.exterior_color.clone().map(FacetValue::Text)),
        statuses: text(|v| enum_text(v.status)),
        price_range: money_range(),
        mileage_range: match (miles.iter().min(), miles.iter().max()) {
            (Some(&min), Some(&max)) => Some(MileageRange {
                min: miles_of(min),
                max: miles_of(max),
            }),
            _ => None,
        },
        year_range: match (years.iter().min(), years.iter().max()) {
            (Some(&min), Some(&max)) => Some(YearRange { min, max }),
            _ => None,
        },
        stale: None,
    }
}

/// Counts values as filters match them: text ignoring case, so `SILVERADO
/// 1500` from one upstream and `Silverado 1500` from another are one bucket
/// (makes, bodies and the like are already one spelling, by the mapping
/// vocabulary). A bucket shows its most frequent spelling, one with lower
/// case letters on a tie.
fn count(hits: &[&Vehicle], get: fn(&Vehicle) -> Option<FacetValue>) -> Vec<FacetCount> {
    let mut buckets: BTreeMap<FacetValue, BTreeMap<FacetValue, u64>> = BTreeMap::new();
    for value in hits.iter().filter_map(|v| get(v)) {
        let key = match &value {
            FacetValue::Text(t) => FacetValue::Text(t.trim().to_lowercase()),
            number => number.clone(),
        };
        *buckets.entry(key).or_default().entry(value).or_insert(0) += 1;
    }
    let shouting =
        |v: &FacetValue| matches!(v, FacetValue::Text(t) if !t.chars().any(char::is_lowercase));
    let mut out: Vec<FacetCount> = buckets
        .into_values()
        .filter_map(|spellings| {
            let count = spellings.values().sum();
            let value = spellings
                .into_iter()
                .max_by_key(|(v, n)| (*n, !shouting(v), std::cmp::Reverse(v.clone())))?
                .0;
            Some(FacetCount { value, count })
        })
        .collect();
    // Most frequent first; ties in value order (BTreeMap order is kept by the stable sort).
    out.sort_by_key(|f| std::cmp::Reverse(f.count));
    out
}

/// The wire name of a unit enum (`in_transit`, `cpo`).
fn enum_text(value: impl serde::Serialize) -> Option<FacetValue> {
    match serde_json::to_value(value).ok()? {
        serde_json::Value::String(s) => Some(FacetValue::Text(s)),
        _ => None,
    }
}

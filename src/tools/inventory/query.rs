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
use crate::model::{DistanceUnit, Mileage, Money, Vehicle};

/// Listed vehicles matching `filters`, in `sort` order (default: fewest days in stock first).
pub fn select(
    inventory: &InventorySnapshot,
    filters: &Filters,
    sort: Option<Sort>,
) -> Vec<Arc<Vehicle>> {
    let words: Vec<String> = filters
        .query
        .iter()
        .flat_map(|q| q.split_whitespace())
        .map(str::to_lowercase)
        .collect();
    let mut hits: Vec<Arc<Vehicle>> = (inventory.listed.iter().enumerate())
        .filter(|(i, v)| {
            matches(v, filters)
                && (words.is_empty() || {
                    let text = inventory.search_text(*i);
                    words.iter().all(|w| text.contains(w.as_str()))
                })
        })
        .map(|(_, v)| v.clone())
        .collect();
    let sort = sort.unwrap_or(Sort {
        field: SortField::DaysInStock,
        order: SortOrder::Asc,
    });
    hits.sort_by(|a, b| compare(a, b, sort).then_with(|| a.id.cmp(&b.id)));
    hits
}

fn matches(v: &Vehicle, f: &Filters) -> bool {
    let any = |wanted: &[String], have: &Option<String>| {
        wanted.is_empty()
            || have.as_deref().is_some_and(|h| {
                wanted
                    .iter()
                    .any(|w| w.trim().eq_ignore_ascii_case(h.trim()))
            })
    };
    (f.condition.is_empty() || f.condition.contains(&v.condition))
        && (f.status.is_empty() || f.status.contains(&v.status))
        && any(&f.make, &v.make)
        && any(&f.model, &v.model)
        && any(&f.trim, &v.trim)
        && any(&f.body, &v.body)
        && any(&f.fuel, &v.fuel)
        && any(&f.transmission, &v.transmission)
        && any(&f.drivetrain, &v.drivetrain)
        && any(&f.exterior_color, &v.exterior_color)
        && any(&f.interior_color, &v.interior_color)
        && f.year_min
            .is_none_or(|min| v.year.is_some_and(|y| y >= min))
        && f.year_max
            .is_none_or(|max| v.year.is_some_and(|y| y <= max))
        && f.price_min
            .as_ref()
            .is_none_or(|min| v.price.as_ref().is_some_and(|p| p.amount >= min.amount))
        && f.price_max
            .as_ref()
            .is_none_or(|max| v.price.as_ref().is_some_and(|p| p.amount <= max.amount))
        && f.mileage_max
            .is_none_or(|max| v.mileage.is_some_and(|m| m.in_miles() <= max.in_miles()))
        && f.vin.as_deref().is_none_or(|vin| {
            v.vin
                .as_deref()
                .is_some_and(|x| x.eq_ignore_ascii_case(vin.trim()))
        })
        && f.stock.as_deref().is_none_or(|s| {
            v.stock
                .as_deref()
                .is_some_and(|x| x.eq_ignore_ascii_case(s.trim()))
        })
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
        SortField::DaysInStock => key(a.days_in_stock, b.days_in_stock, o),
        SortField::LastVerifiedAt => key(Some(a.last_verified_at), Some(b.last_verified_at), o),
    }
}

/// Facet counts over already-filtered vehicles; values sorted by count, then value.
pub fn facets(hits: &[Arc<Vehicle>]) -> FacetsResult {
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

fn count(hits: &[Arc<Vehicle>], get: fn(&Vehicle) -> Option<FacetValue>) -> Vec<FacetCount> {
    let mut counts: BTreeMap<FacetValue, u64> = BTreeMap::new();
    for value in hits.iter().filter_map(|v| get(v)) {
        *counts.entry(value).or_insert(0) += 1;
    }
    let mut out: Vec<FacetCount> = counts
        .into_iter()
        .map(|(value, count)| FacetCount { value, count })
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

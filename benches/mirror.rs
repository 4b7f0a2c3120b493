//! The inventory mirror, in-process: `inventory.search`'s filter-sort-page
//! over a dealership's mirrored units (a group of 50,000 vehicles across 100
//! dealerships is 500 per dealership; one 5,000-unit store for scale), an
//! `inventory.get` lookup by VIN, the diff of a 5,000-unit read of which 2 %
//! changed, and the memory a mirrored vehicle takes (the growth of the
//! process's resident set while 50,000 are built).
//!
//! Vehicles are synthetic but full: every field the canonical vehicle has,
//! a 300-character description and ten photo URLs, as a dealer feed gives.
//!
//! `cargo bench --profile dist --bench mirror` (BENCHMARKS.md, "Inventory mirror").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{NaiveDate, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use dms_bridge::adapters::{InventorySnapshot, Lookup, UnitRef};
use dms_bridge::mirror::diff;
use dms_bridge::model::{Condition, DistanceUnit, Mileage, Money, Vehicle, VehicleStatus};
use dms_bridge::tools::inventory::query;
use dms_bridge::tools::inventory::{Filters, Sort, SortField, SortOrder};

/// The process's resident set size in bytes (Linux), for the memory-per-vehicle figure.
fn rss_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

const MAKES: [(&str, [&str; 4]); 5] = [
    ("Toyota", ["Camry", "RAV4", "Tacoma", "Highlander"]),
    ("Honda", ["Civic", "Accord", "CR-V", "Pilot"]),
    ("Ford", ["F-150", "Escape", "Explorer", "Mustang"]),
    ("Chevrolet", ["Silverado", "Equinox", "Tahoe", "Malibu"]),
    ("Hyundai", ["Elantra", "Tucson", "Santa Fe", "Palisade"]),
];

fn usd(cents: i64) -> Money {
    Money {
        amount: cents,
        currency: "USD".into(),
    }
}

fn vehicle(dealership: usize, n: usize) -> Vehicle {
    let (make, models) = MAKES[n % MAKES.len()];
    let model = models[(n / MAKES.len()) % models.len()];
    let year = 2015 + (n % 11) as i32;
    let price = 1_500_000 + ((n * 7919) % 5_000_000) as i64;
    Vehicle {
        id: format!("veh-{dealership:03}-{n:05}"),
        dealership_id: format!("dealer-{dealership:03}"),
        vin: Some(format!("1HGCM8263{:08}", dealership * 100_000 + n)),
        stock: Some(format!("S{dealership:03}{n:05}")),
        status: if n.is_multiple_of(9) {
            VehicleStatus::InTransit
        } else {
            VehicleStatus::Available
        },
        condition: [Condition::New, Condition::Used, Condition::Cpo][n % 3],
        year: Some(year),
        make: Some(make.into()),
        model: Some(model.into()),
        trim: Some(["LX", "EX", "Sport", "Limited"][n % 4].into()),
        body: Some(["Sedan", "SUV", "Pickup"][n % 3].into()),
        fuel: Some(["Gasoline", "Hybrid", "Electric"][n % 3].into()),
        transmission: Some("Automatic".into()),
        drivetrain: Some(["FWD", "AWD", "4WD"][n % 3].into()),
        engine: Some("2.5L I4".into()),
        doors: Some(4),
        exterior_color: Some(["White", "Black", "Silver", "Blue", "Red"][n % 5].into()),
        interior_color: Some(["Black", "Gray", "Beige"][n % 3].into()),
        mileage: Some(Mileage {
            value: ((n * 3371) % 90_000) as u64,
            unit: DistanceUnit::Mi,
        }),
        price: Some(usd(price)),
        list_price: Some(usd(price - 99_500)),
        msrp: Some(usd(price + 250_000)),
        offered_price: None,
        inventory_date: NaiveDate::from_ymd_opt(2026, 1 + (n % 10) as u32, 1 + (n % 28) as u32),
        days_in_stock: Some((n % 120) as u32),
        photos: (0..10)
            .map(|p| {
                format!("https://images.dealer-{dealership:03}.example/units/{n:05}/photo-{p}.jpg")
            })
            .collect(),
        vdp_url: Some(format!(
            "https://www.dealer-{dealership:03}.example/inventory/{year}-{make}-{model}-{n:05}"
        )),
        description: Some(format!(
            "{year} {make} {model} in excellent condition, one owner, clean history report, \
             recent service with new brakes and tires, heated seats, adaptive cruise control, \
             lane keeping assist, Apple CarPlay and Android Auto, backup camera, keyless entry, \
             remote start, and the balance of the factory warranty. Stock {n:05}."
        )),
        last_verified_at: Utc::now().fixed_offset(),
    }
}

fn dealership(dealership: usize, units: usize) -> InventorySnapshot {
    let listed = (0..units)
        .map(|n| Arc::new(vehicle(dealership, n)))
        .collect();
    InventorySnapshot::new(listed, Vec::new(), Some(Utc::now())).indexed()
}

/// A typical agent search: two makes, a price ceiling, newest first, page of 20.
fn typical_search() -> (Filters, Sort) {
    let filters: Filters = serde_json::from_value(serde_json::json!({
        "make": ["Toyota", "Honda"],
        "price_max": { "amount": 4_000_000, "currency": "USD" },
        "status": ["available"]
    }))
    .unwrap();
    let sort = Sort {
        field: SortField::Year,
        order: SortOrder::Desc,
    };
    (filters, sort)
}

/// The search before the copy kept columns and orders (up to `14e5f22`):
/// every unit tested against the filters, the matches sorted. Kept here so
/// that the two are measured side by side in one run. It covers the
/// filters of [`typical_search`] only.
fn scan_and_sort<'a>(
    snapshot: &'a InventorySnapshot,
    filters: &Filters,
    sort: Sort,
) -> Vec<&'a Vehicle> {
    let any = |wanted: &[String], have: &Option<String>| {
        wanted.is_empty()
            || have.as_deref().is_some_and(|h| {
                wanted
                    .iter()
                    .any(|w| w.trim().eq_ignore_ascii_case(h.trim()))
            })
    };
    let mut hits: Vec<&Vehicle> = snapshot
        .listed
        .iter()
        .map(|v| &**v)
        .filter(|v| {
            any(&filters.make, &v.make)
                && (filters.status.is_empty() || filters.status.contains(&v.status))
                && filters
                    .price_max
                    .as_ref()
                    .is_none_or(|max| v.price.as_ref().is_some_and(|p| p.amount <= max.amount))
        })
        .collect();
    assert_eq!(sort.field, SortField::Year);
    hits.sort_by(|a, b| {
        let key = match (a.year, b.year) {
            (Some(x), Some(y)) => y.cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        key.then_with(|| a.id.cmp(&b.id))
    });
    hits
}

/// p50 and p99 of `run` over `samples` calls (criterion reports means and medians only).
fn percentiles(samples: usize, mut run: impl FnMut()) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[samples / 2], times[samples * 99 / 100])
}

fn memory_per_vehicle() {
    let before = rss_bytes();
    let group: Vec<InventorySnapshot> = (0..100).map(|d| dealership(d, 500)).collect();
    let after = rss_bytes();
    let units: usize = group.iter().map(|s| s.listed.len()).sum();
    println!(
        "mirror memory: {units} vehicles in 100 indexed dealership copies grow the RSS by {} bytes, {} bytes per vehicle",
        after - before,
        (after - before) / units
    );
    drop(group);
}

fn mirror(c: &mut Criterion) {
    memory_per_vehicle();
    let group: BTreeMap<usize, InventorySnapshot> =
        (0..100).map(|d| (d, dealership(d, 500))).collect();
    let one = &group[&42];
    let big = dealership(7, 5_000);
    // The worst case: a whole group's inventory in one dealership's copy.
    let whole = dealership(99, 50_000);
    let (filters, sort) = typical_search();
    let search = |snapshot: &InventorySnapshot| {
        let hits = query::select(snapshot, &filters, Some(sort));
        std::hint::black_box(hits.iter().take(20).count());
    };
    let copies = [
        ("500 units", one, 2_000),
        ("5,000 units", &big, 2_000),
        ("50,000 units in one copy", &whole, 300),
    ];
    for (name, snapshot, samples) in copies {
        // The first search of a sort order computes it for the copy.
        let first = Instant::now();
        search(snapshot);
        let first = first.elapsed();
        let (p50, p99) = percentiles(samples, || search(snapshot));
        let (base50, base99) = percentiles(samples, || {
            std::hint::black_box(
                scan_and_sort(snapshot, &filters, sort)
                    .iter()
                    .take(20)
                    .count(),
            );
        });
        assert_eq!(
            query::select(snapshot, &filters, Some(sort)),
            scan_and_sort(snapshot, &filters, sort),
            "the same answer as the scan"
        );
        println!(
            "inventory.search over {name}: p50 {p50:?}, p99 {p99:?}; first search of the order {first:?}; \
             scan-and-sort (before) p50 {base50:?}, p99 {base99:?} ({samples} samples each)"
        );
    }
    drop(whole);
    c.bench_function("search 500 units (one of 100 dealerships)", |b| {
        b.iter(|| search(one))
    });
    c.bench_function("search 5,000 units", |b| b.iter(|| search(&big)));
    let free_text: Filters =
        serde_json::from_value(serde_json::json!({ "query": "tahoe limited" })).unwrap();
    let (p50, p99) = percentiles(500, || {
        std::hint::black_box(query::select(&big, &free_text, None).len());
    });
    println!("free-text search over 5,000 units: p50 {p50:?}, p99 {p99:?} (500 samples)");
    c.bench_function("free-text search 5,000 units", |b| {
        b.iter(|| std::hint::black_box(query::select(&big, &free_text, None).len()))
    });
    let vin = big.listed[4_321].vin.clone().unwrap();
    c.bench_function("get by VIN, 5,000 units", |b| {
        b.iter(|| {
            assert!(matches!(
                big.lookup(UnitRef::Vin(std::hint::black_box(&vin))),
                Lookup::Listed(_)
            ))
        })
    });

    // A read of 5,000 units of which 2 % changed price.
    let mut changed: Vec<Arc<Vehicle>> = big.listed.clone();
    for v in changed.iter_mut().step_by(50) {
        let mut unit = Vehicle::clone(v);
        unit.price = unit.price.map(|p| usd(p.amount - 50_000));
        *v = Arc::new(unit);
    }
    let fresh = InventorySnapshot::new(changed, Vec::new(), Some(Utc::now()));
    let gone = BTreeMap::new();
    let plan = diff::plan(Some(&big), &gone, &fresh, Utc::now());
    assert_eq!(plan.events.len(), 100);
    c.bench_function("diff a 5,000-unit read, 2 % changed", |b| {
        b.iter(|| {
            std::hint::black_box(
                diff::plan(Some(&big), &gone, &fresh, Utc::now())
                    .events
                    .len(),
            )
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = mirror
}
criterion_main!(benches);

//! What sealing customer data costs per value (`[store.encryption]`,
//! BENCHMARKS.md "The customer data lifecycle"): AES-256-GCM sealing and
//! opening of a stored lead (~1 KB) and of a rendered ADF document (~2 KB),
//! and the keyed hashes a lookup computes (one key, and two keys mid-rotation).
//!
//! `cargo bench --bench sealing`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use criterion::{Criterion, criterion_group, criterion_main};
use dms_bridge::store::sealing::{Keyring, Sealing, email_material};

fn sealing(current: &str, ids: &[(&str, u8)]) -> Sealing {
    let keys: BTreeMap<String, [u8; 32]> = ids
        .iter()
        .map(|(id, b)| ((*id).to_owned(), [*b; 32]))
        .collect();
    Sealing::new(Some(Keyring::new(current, &keys).unwrap()))
}

fn bench(c: &mut Criterion) {
    let one = sealing("k1", &[("k1", 1)]);
    let rotating = sealing("k2", &[("k1", 1), ("k2", 2)]);
    let lead = "x".repeat(1024);
    let document = "y".repeat(2048);
    let sealed_lead = one.seal("leads.request", &lead).unwrap();
    let sealed_document = one.seal("lead_deliveries.document", &document).unwrap();
    let material = email_material("dana.whitfield@example.com");
    c.bench_function("seal 1 KB lead", |b| {
        b.iter(|| one.seal("leads.request", &lead).unwrap())
    });
    c.bench_function("open 1 KB lead", |b| {
        b.iter(|| one.open("leads.request", &sealed_lead).unwrap())
    });
    c.bench_function("seal 2 KB document", |b| {
        b.iter(|| one.seal("lead_deliveries.document", &document).unwrap())
    });
    c.bench_function("open 2 KB document", |b| {
        b.iter(|| {
            one.open("lead_deliveries.document", &sealed_document)
                .unwrap()
        })
    });
    c.bench_function("index hash", |b| b.iter(|| one.index(&material)));
    c.bench_function("lookups, two keys", |b| {
        b.iter(|| rotating.lookups(&material))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

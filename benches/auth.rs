//! What a caller's credential costs per call, in-process: a static token
//! (constant-time comparison against every configured one), an OAuth access
//! token already checked (the 60 s memo), and an OAuth access token checked
//! from scratch (ES256 signature against the cached JWKS, claims, principal).
//! The JWKS comes from the test-kit's demo authorization server on loopback;
//! it is fetched once, before anything is measured.
//!
//! `cargo bench --bench auth` (BENCHMARKS.md, "Sign-in").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dms_bridge::config::OAuthConfig;
use dms_bridge::contract::principal::{DealershipGrant, Principal, Scope};
use dms_bridge::gateway::auth::{Authenticator, OAuthVerifier};
use dms_bridge_testkit::oauth::{DemoAuthServer, DemoUser};
use secrecy::SecretString;
use tokio_util::sync::CancellationToken;

const RESOURCE: &str = "http://127.0.0.1:8787/mcp";

fn static_principal(i: usize) -> (SecretString, Principal) {
    (
        SecretString::from(format!("static-token-{i}")),
        Principal {
            name: Arc::from(format!("agent-{i}")),
            anonymous: false,
            dealerships: DealershipGrant::All,
            scopes: BTreeSet::from([Scope::InventoryRead]),
        },
    )
}

fn auth(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let cancel = CancellationToken::new();
    let server = rt
        .block_on(DemoAuthServer::start(
            "127.0.0.1:0".parse().unwrap(),
            vec![RESOURCE.to_owned()],
            DemoUser::defaults(),
            cancel.child_token(),
        ))
        .unwrap();
    let config: OAuthConfig = serde_json::from_value(serde_json::json!({
        "resource": RESOURCE,
        "issuer": server.issuer(),
    }))
    .unwrap();
    // Ten static tokens configured: each is compared against all of them.
    let statics = (0..10).map(static_principal).collect();
    let verifier = OAuthVerifier::new(&config, dms_bridge::net::client_builder().build().unwrap());
    let authenticator = Authenticator::new(statics, BTreeSet::new(), Some(verifier));
    let mint = |jti: usize| {
        let mut claims = server.claims("demo-group").unwrap();
        claims.jti = format!("bench-{jti}");
        server.mint(&claims).unwrap()
    };
    let warm = mint(0);
    assert!(
        rt.block_on(authenticator.authenticate_bearer(&warm))
            .is_ok(),
        "the JWKS is fetched and the token accepted"
    );

    let mut group = c.benchmark_group("authenticate_bearer");
    group.bench_function("static_token_of_10", |b| {
        b.iter(|| {
            rt.block_on(authenticator.authenticate_bearer("static-token-7"))
                .is_ok()
        })
    });
    group.bench_function("oauth_jwt_memoized", |b| {
        b.iter(|| {
            rt.block_on(authenticator.authenticate_bearer(&warm))
                .is_ok()
        })
    });
    group.sample_size(20);
    // Every token ever minted here is new (its own jti), so none is memoized,
    // not even across samples; minting is not timed.
    let next_jti = std::sync::atomic::AtomicUsize::new(1);
    group.bench_function("oauth_jwt_es256_checked", |b| {
        b.iter_custom(|iters| {
            let tokens: Vec<String> = (0..iters)
                .map(|_| mint(next_jti.fetch_add(1, std::sync::atomic::Ordering::Relaxed)))
                .collect();
            let started = Instant::now();
            for token in &tokens {
                assert!(
                    rt.block_on(authenticator.authenticate_bearer(token))
                        .is_ok()
                );
            }
            started.elapsed()
        })
    });
    group.finish();
    cancel.cancel();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = auth
}
criterion_main!(benches);

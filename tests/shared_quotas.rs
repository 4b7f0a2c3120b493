#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Quotas shared by replicas through a real `redis-server` (`[quotas]`):
//! two limiter instances on one Redis are one quota; retry-after is usable;
//! with Redis gone each falls back to its local share, and shares again once
//! Redis is back. Bounds, not exact figures: the machine is shared.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::redis_server::RedisServer;
use dms_bridge::config::{QuotasConfig, Rate};
use dms_bridge::quotas::{Admission, SharedQuota, SharedQuotaStatus, SharedQuotaStore};
use dms_bridge::telemetry::metrics::Metrics;

const REPLICAS: u32 = 2;

/// One replica's view of a quota of `requests` per second with that burst.
fn replica(
    redis: &RedisServer,
    requests: u32,
    burst: u32,
) -> (SharedQuota, Arc<SharedQuotaStore>, Arc<Metrics>) {
    let config = QuotasConfig {
        url: redis.url(),
        prefix: "test:quota:".into(),
        timeout: Duration::from_millis(200),
        replicas: REPLICAS,
    };
    let metrics = Metrics::new();
    let store = SharedQuotaStore::new(&config, metrics.clone()).unwrap();
    let rate = Rate {
        requests,
        per: Duration::from_secs(1),
        burst: Some(burst),
    };
    let quota = SharedQuota::new(store.clone(), "token", &rate, burst).unwrap();
    (quota, store, metrics)
}

/// Hammers `key` from `tasks` tasks for `length`; returns when each request was admitted.
async fn hammer(
    quota: Arc<SharedQuota>,
    key: &'static str,
    tasks: usize,
    length: Duration,
) -> Vec<Instant> {
    let deadline = Instant::now() + length;
    let mut workers = Vec::new();
    for _ in 0..tasks {
        let quota = quota.clone();
        workers.push(tokio::spawn(async move {
            let mut admitted = Vec::new();
            while Instant::now() < deadline {
                match quota.check(key).await {
                    Admission::Allowed => admitted.push(Instant::now()),
                    Admission::Refused { retry_after } => {
                        assert!(
                            retry_after > Duration::ZERO && retry_after <= Duration::from_secs(1),
                            "{retry_after:?}"
                        );
                    }
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            admitted
        }));
    }
    let mut all = Vec::new();
    for worker in workers {
        all.extend(worker.await.unwrap());
    }
    all.sort();
    all
}

/// The most admissions seen in any window of `window` (each window starts at an admission).
fn busiest_window(admitted: &[Instant], window: Duration) -> usize {
    admitted
        .iter()
        .enumerate()
        .map(|(i, start)| {
            admitted[i..]
                .iter()
                .take_while(|t| t.duration_since(*start) < window)
                .count()
        })
        .max()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_on_one_redis_share_one_quota() {
    let redis = RedisServer::start();
    let (a, _, metrics_a) = replica(&redis, 10, 10);
    let (b, _, metrics_b) = replica(&redis, 10, 10);
    let length = Duration::from_secs(3);
    let (from_a, from_b) = tokio::join!(
        hammer(Arc::new(a), "alice", 8, length),
        hammer(Arc::new(b), "alice", 8, length)
    );
    let mut admitted: Vec<Instant> = from_a.iter().chain(&from_b).copied().collect();
    admitted.sort();
    // GCRA: at most burst + rate × window in any window (+1 for the edge and timestamp jitter).
    assert!(
        admitted.len() <= 10 + 30 + 1,
        "{} admitted in 3 s",
        admitted.len()
    );
    assert!(
        admitted.len() >= 30,
        "only {} admitted in 3 s",
        admitted.len()
    );
    let busiest = busiest_window(&admitted, Duration::from_secs(1));
    assert!(
        busiest <= 10 + 10 + 1,
        "{busiest} admitted within one second"
    );
    // Each replica took part: the quota is shared, not split.
    assert!(!from_a.is_empty() && !from_b.is_empty());
    assert_eq!(
        metrics_a.quota_fallbacks.get() + metrics_b.quota_fallbacks.get(),
        0
    );
}

#[tokio::test]
async fn waiting_the_retry_after_is_admitted() {
    let redis = RedisServer::start();
    let (a, _, _) = replica(&redis, 5, 1);
    let (b, _, _) = replica(&redis, 5, 1);
    for _ in 0..3 {
        assert_eq!(a.check("bob").await, Admission::Allowed);
        let Admission::Refused { retry_after } = b.check("bob").await else {
            panic!("the other replica admitted past the shared burst");
        };
        assert!(
            retry_after > Duration::ZERO && retry_after <= Duration::from_millis(200),
            "{retry_after:?}"
        );
        tokio::time::sleep(retry_after + Duration::from_millis(5)).await;
        assert_eq!(b.check("bob").await, Admission::Allowed);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_redis_each_replica_keeps_its_share_then_shares_again() {
    let mut redis = RedisServer::start();
    let (a, store_a, metrics) = replica(&redis, 10, 10);
    let (b, _, _) = replica(&redis, 10, 10);
    let a = Arc::new(a);
    assert_eq!(a.check("carol").await, Admission::Allowed);
    assert_eq!(store_a.status(), SharedQuotaStatus::Shared);

    redis.kill();
    let length = Duration::from_secs(2);
    let admitted = hammer(a.clone(), "dave", 4, length).await;
    // The local share: 10 / 2 replicas = 5 per second, burst 5.
    assert!(
        admitted.len() <= 5 + 10 + 1,
        "{} admitted in 2 s without Redis",
        admitted.len()
    );
    assert!(
        admitted.len() >= 5,
        "only {} admitted without Redis",
        admitted.len()
    );
    assert!(busiest_window(&admitted, Duration::from_secs(1)) <= 5 + 5 + 1);
    assert!(metrics.quota_fallbacks.get() > 0);
    assert!(matches!(
        store_a.status(),
        SharedQuotaStatus::LocalShare { .. }
    ));

    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let _ = a.check("probe").await;
        if store_a.status() == SharedQuotaStatus::Shared {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still on the local share 10 s after Redis came back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Shared again: one replica gets the whole burst (its share is 5), and the other none of it.
    let mut admitted = 0;
    for _ in 0..10 {
        if a.check("erin").await == Admission::Allowed {
            admitted += 1;
        }
    }
    assert!(
        admitted > 5,
        "only {admitted} of a burst of 10 once Redis was back"
    );
    assert!(matches!(b.check("erin").await, Admission::Refused { .. }) || admitted < 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_redis_costs_one_timeout_then_the_local_share_decides() {
    let redis = RedisServer::start();
    let (a, store, metrics) = replica(&redis, 10, 10);
    assert_eq!(a.check("frank").await, Admission::Allowed);

    redis.pause();
    let started = Instant::now();
    let first = a.check("frank").await;
    let waited = started.elapsed();
    // The configured 200 ms, not the operating system's TCP timeouts.
    assert!(
        waited < Duration::from_secs(1),
        "a check waited {waited:?} on a hung Redis"
    );
    assert_eq!(first, Admission::Allowed);
    assert!(matches!(
        store.status(),
        SharedQuotaStatus::LocalShare { .. }
    ));
    // The next checks do not wait on Redis again, and stay within the share (burst 5).
    let started = Instant::now();
    let mut admitted = 1;
    for _ in 0..20 {
        if a.check("frank").await == Admission::Allowed {
            admitted += 1;
        }
    }
    assert!(started.elapsed() < Duration::from_millis(150));
    assert!(admitted <= 5 + 1, "{admitted} admitted on the local share");
    assert!(metrics.quota_fallbacks.get() >= 21);

    redis.resume();
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.status() != SharedQuotaStatus::Shared {
        assert!(
            Instant::now() < deadline,
            "still on the local share after Redis answered again"
        );
        let _ = a.check("probe").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

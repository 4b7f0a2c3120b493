//! What one shared quota check (`[quotas]`, a GCRA script in Redis) adds to a
//! call: the round trip to a `redis-server` on loopback, measured against the
//! local governor check every call already makes. Starts its own
//! `redis-server` on a free loopback port (nothing saved), runs the checks
//! one after another from one task, and prints percentiles.
//!
//! `cargo bench --bench quota_check` (BENCHMARKS.md, "Shared quotas (Redis)");
//! `QUOTA_CHECKS=N` sets the number of checks (default 20000).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dms_bridge::config::{QuotasConfig, Rate};
use dms_bridge::quotas::{Admission, SharedQuota, SharedQuotaStore};
use dms_bridge::telemetry::metrics::Metrics;
use governor::DefaultKeyedRateLimiter;

/// A quota no run reaches, so every check is admitted (the usual case).
const RATE: Rate = Rate {
    requests: 1_000_000_000,
    per: Duration::from_secs(1),
    burst: Some(1_000_000),
};

struct Redis(Child);

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_redis(port: u16, dir: &std::path::Path) -> Redis {
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server on PATH (Debian package `redis-server`)");
    let redis = Redis(child);
    for _ in 0..500 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return redis;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("redis-server did not listen on {port}");
}

fn percentiles(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p) as usize];
    println!(
        "{name:<28} n={:>6}  p50={:>8.1?}  p90={:>8.1?}  p99={:>8.1?}  max={:>8.1?}",
        samples.len(),
        at(0.50),
        at(0.90),
        at(0.99),
        samples[samples.len() - 1],
    );
}

fn main() {
    let checks: usize = std::env::var("QUOTA_CHECKS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _redis = start_redis(port, dir.path());
    let config = QuotasConfig {
        url: format!("redis://127.0.0.1:{port}"),
        prefix: "bench:quota:".into(),
        timeout: Duration::from_millis(50),
        replicas: 2,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let metrics = Metrics::new();
    let store = SharedQuotaStore::new(&config, metrics.clone()).unwrap();
    let shared = SharedQuota::new(store, "token", &RATE, 1).unwrap();
    let local = DefaultKeyedRateLimiter::<String>::keyed(RATE.quota(1).unwrap());

    let samples = rt.block_on(async {
        // Connect and load the script first; only steady-state checks count.
        for _ in 0..1_000 {
            assert_eq!(shared.check("warm-up").await, Admission::Allowed);
        }
        let mut samples = Vec::with_capacity(checks);
        for i in 0..checks {
            let key = format!("caller-{}", i % 100);
            let started = Instant::now();
            let admission = shared.check(&key).await;
            samples.push(started.elapsed());
            assert_eq!(admission, Admission::Allowed);
        }
        samples
    });
    assert_eq!(metrics.quota_fallbacks.get(), 0, "a check fell back");
    let local_samples: Vec<Duration> = (0..checks)
        .map(|i| {
            let key = format!("caller-{}", i % 100);
            let started = Instant::now();
            let admitted = local.check_key(&key).is_ok();
            let took = started.elapsed();
            assert!(admitted);
            took
        })
        .collect();
    percentiles("shared check (Redis)", samples);
    percentiles("local governor check", local_samples);
}

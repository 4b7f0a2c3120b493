#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Quotas shared by replicas through a real `redis-server` (`[quotas]`):
//! two limiter instances on one Redis are one quota; retry-after is usable;
//! with Redis gone each falls back to its local share, and shares again once
//! Redis is back. Bounds, not exact figures: the machine is shared.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::busiest_window;
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

// ---------------------------------------------------------------------------
// Two `dms-bridge serve` processes on one Redis, called over MCP like any
// client would. The vendor is a wiremock server; the store is each process's own.

mod bridges {
    use std::net::SocketAddr;
    use std::sync::Mutex;

    use crate::common::config::{BridgeConfig, Dealership, Token, Upstream};
    use crate::common::process::{free_addr, start_bridge};
    use crate::common::{
        Arrivals, Client, INVENTORY_PATH, call, connect, count, err, inventory_ok, mount_token, ok,
    };
    use rmcp::model::CallToolResult;
    use serde_json::{Value, json};
    use tokio::process::Child;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer};

    use super::*;

    /// What a test varies in the two processes' common config.
    struct Setup<'a> {
        vendor: &'a str,
        /// The upstream's resilience table.
        resilience: &'a str,
        /// `[rate_limits]` lines.
        rate_limits: &'a [&'a str],
        /// `[quotas] url`; `None`: no `[quotas]` (each process keeps its own quotas).
        redis: Option<String>,
    }

    fn config(setup: &Setup, listen: SocketAddr) -> String {
        let reader = Token::new("acme", "acme-token", &["acme"], &["amcp:inventory:read"]);
        let acme = Dealership::acme()
            .set("anonymous_inventory", "true")
            .route("inventory", "cdk");
        let mut config = BridgeConfig::new()
            .section("server", &format!("listen = \"{listen}\""))
            .section("store", r#"url = "sqlite::memory:""#)
            .call_timeout("5s")
            .no_cache()
            .dealership(acme)
            .upstream(
                "cdk",
                Upstream::cdk(setup.vendor).resilience(setup.resilience),
            )
            .token(reader);
        for line in setup.rate_limits {
            config = config.section("rate_limits", line);
        }
        if let Some(url) = &setup.redis {
            for line in [
                format!("url = \"{url}\""),
                "prefix = \"test:quota:\"".into(),
                "timeout = \"200ms\"".into(),
                format!("replicas = {REPLICAS}"),
            ] {
                config = config.section("quotas", &line);
            }
        }
        config.render()
    }

    /// Two processes of one config; they stop when the returned handles drop.
    struct Replicas {
        _dir: tempfile::TempDir,
        _processes: Vec<Child>,
        addrs: Vec<SocketAddr>,
    }

    impl Replicas {
        async fn start(setup: &Setup<'_>) -> Self {
            let dir = tempfile::tempdir().unwrap();
            let mut processes = Vec::new();
            let mut addrs = Vec::new();
            for replica in ["a", "b"] {
                let addr = free_addr();
                let file = dir.path().join(format!("bridge-{replica}.toml"));
                std::fs::write(&file, config(setup, addr)).unwrap();
                processes.push(start_bridge(&file, addr).await);
                addrs.push(addr);
            }
            Self {
                _dir: dir,
                _processes: processes,
                addrs,
            }
        }

        async fn clients(&self, token: Option<&str>) -> Vec<Client> {
            let mut clients = Vec::new();
            for addr in &self.addrs {
                clients.push(connect(&format!("http://{addr}/mcp"), token).await);
            }
            clients
        }
    }

    async fn search(client: &Client, limit: u32) -> CallToolResult {
        call(
            client,
            "inventory.search",
            json!({ "dealership_id": "acme", "limit": limit }),
        )
        .await
    }

    /// Whether the call was admitted; a refusal must be the caller quota's `scope`.
    fn admitted(result: &CallToolResult, scope: &str) -> bool {
        if result.is_error != Some(true) {
            ok(result);
            return true;
        }
        let error = err(result);
        assert_eq!(error["code"], "rate_limited", "{error}");
        assert_eq!(error["details"]["scope"], scope, "{error}");
        let wait = error["details"]["retry_after_ms"].as_u64().unwrap_or(0);
        assert!(wait > 0, "retry_after_ms must be positive: {error}");
        false
    }

    /// `calls` searches on each replica, alternating; how many were admitted.
    async fn alternate(clients: &[Client], calls: u32, scope: &str) -> usize {
        let mut admitted_calls = 0;
        for i in 0..calls {
            for client in clients {
                if admitted(&search(client, i + 1).await, scope) {
                    admitted_calls += 1;
                }
            }
        }
        admitted_calls
    }

    async fn vendor() -> MockServer {
        let server = MockServer::start().await;
        mount_token(&server).await;
        Mock::given(method("GET"))
            .and(path(INVENTORY_PATH))
            .respond_with(inventory_ok())
            .mount(&server)
            .await;
        server
    }

    async fn get_json(addr: SocketAddr, route: &str) -> (u16, Value) {
        let response = reqwest::get(format!("http://{addr}{route}")).await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    async fn fallbacks(addr: SocketAddr) -> f64 {
        common::process::metric(addr, "dms_bridge_quota_fallbacks_total").await
    }

    const NO_RETRIES: &str = "{ retries = { max = 0 } }";
    /// 6 a minute: nothing refills during a test (one call every 10 s).
    const SIX_A_MINUTE: &str = r#"per_token = { requests = 6, per = "1m", burst = 6 }"#;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_bridges_admit_one_token_quota_between_them() {
        let redis = RedisServer::start();
        let server = vendor().await;
        let shared = Setup {
            vendor: &server.uri(),
            resilience: NO_RETRIES,
            rate_limits: &[SIX_A_MINUTE],
            redis: Some(redis.url()),
        };
        let replicas = Replicas::start(&shared).await;
        let clients = replicas.clients(Some("acme-token")).await;
        let admitted_calls = alternate(&clients, 6, "token").await;
        assert_eq!(admitted_calls, 6, "12 calls across both on a quota of 6");
        assert_eq!(count(&server, INVENTORY_PATH).await, 6);
        for addr in &replicas.addrs {
            let (status, ready) = get_json(*addr, "/readyz").await;
            assert_eq!(status, 200, "{ready}");
            assert_eq!(ready["quotas"], json!({ "state": "shared" }), "{ready}");
        }
        drop(replicas);

        // The same two without [quotas]: each keeps its own 6.
        let alone = Setup {
            redis: None,
            ..shared
        };
        let replicas = Replicas::start(&alone).await;
        let clients = replicas.clients(Some("acme-token")).await;
        assert_eq!(alternate(&clients, 6, "token").await, 12);
        let (_, ready) = get_json(replicas.addrs[0], "/readyz").await;
        assert!(ready.get("quotas").is_none(), "{ready}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_bridges_share_one_anonymous_quota_per_address() {
        let redis = RedisServer::start();
        let server = vendor().await;
        let replicas = Replicas::start(&Setup {
            vendor: &server.uri(),
            resilience: NO_RETRIES,
            rate_limits: &[r#"anonymous = { requests = 3, per = "1m", burst = 3 }"#],
            redis: Some(redis.url()),
        })
        .await;
        let clients = replicas.clients(None).await;
        assert_eq!(alternate(&clients, 4, "anonymous").await, 3);
        assert_eq!(count(&server, INVENTORY_PATH).await, 3);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn two_bridges_keep_one_vendor_quota() {
        let redis = RedisServer::start();
        let server = MockServer::start().await;
        mount_token(&server).await;
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        Mock::given(method("GET"))
            .and(path(INVENTORY_PATH))
            .respond_with(Arrivals(arrivals.clone()))
            .mount(&server)
            .await;
        // 4 a second, burst 1: one bridge alone would send 4/s, two unshared 8/s.
        let replicas = Replicas::start(&Setup {
            vendor: &server.uri(),
            resilience: r#"{ rate_limit = { requests = 4, per = "1s", burst = 1 }, max_queue_wait = "300ms", retries = { max = 0 } }"#,
            rate_limits: &[r#"per_token = { requests = 100000, per = "1m", burst = 10000 }"#],
            redis: Some(redis.url()),
        })
        .await;
        let mut callers = Vec::new();
        for _ in 0..3 {
            callers.extend(replicas.clients(Some("acme-token")).await);
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        let loops = callers
            .into_iter()
            .enumerate()
            .map(|(i, client)| async move {
                let mut calls = i as u32 * 10;
                while Instant::now() < deadline {
                    calls += 1;
                    let result = search(&client, calls % 100 + 1).await;
                    if result.is_error == Some(true) {
                        let error = err(&result);
                        assert_eq!(error["code"], "rate_limited", "{error}");
                        assert_eq!(error["details"]["scope"], "upstream", "{error}");
                    }
                }
            });
        futures::future::join_all(loops).await;

        let times = arrivals.lock().unwrap().clone();
        let span = times.last().unwrap().duration_since(times[0]);
        let offsets: Vec<u128> = times
            .iter()
            .map(|t| t.duration_since(times[0]).as_millis())
            .collect();
        // GCRA at 4/s, burst 1: at most 4 × span + 1 (+1 for the timestamps' jitter).
        let most = (4.0 * span.as_secs_f64()).floor() as usize + 2;
        assert!(
            times.len() <= most,
            "{} vendor requests in {span:?}: {offsets:?}",
            times.len()
        );
        assert!(
            busiest_window(&times, Duration::from_secs(1)) <= 5,
            "more than 4/s + burst 1 at the vendor: {offsets:?}"
        );
        assert!(times.len() >= 6, "the vendor saw too little: {offsets:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_redis_each_bridge_keeps_its_local_share() {
        let mut redis = RedisServer::start();
        let server = vendor().await;
        let replicas = Replicas::start(&Setup {
            vendor: &server.uri(),
            resilience: NO_RETRIES,
            rate_limits: &[SIX_A_MINUTE],
            redis: Some(redis.url()),
        })
        .await;
        let clients = replicas.clients(Some("acme-token")).await;
        // One shared call each: 4 of the 6 remain.
        assert_eq!(alternate(&clients, 1, "token").await, 2);
        assert_eq!(fallbacks(replicas.addrs[0]).await, 0.0);

        redis.kill();
        // Each alone allows its share, 6 / 2 replicas = 3 (the calls above went to Redis).
        let admitted_calls = alternate(&clients, 5, "token").await;
        assert_eq!(admitted_calls, 6, "3 per bridge on the local share");
        for addr in &replicas.addrs {
            let (status, ready) = get_json(*addr, "/readyz").await;
            assert_eq!(status, 200, "a local share is a warning: {ready}");
            assert_eq!(ready["quotas"]["state"], "local_share", "{ready}");
            assert!(
                ready["quotas"]["reason"]
                    .as_str()
                    .is_some_and(|r| !r.is_empty()),
                "{ready}"
            );
            assert!(fallbacks(*addr).await >= 5.0);
        }
    }
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Quotas shared by replicas through a real `redis-server` (`[quotas]`):
//! two limiter instances on one Redis are one quota; retry-after is usable;
//! with Redis gone each falls back to its local share, and shares again once
//! Redis is back. Quotas refill once an hour at most, so every count is the
//! quota's to decide, not the machine's speed; Redis gets a timeout no
//! loaded machine reaches, but for the test of a hung Redis.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::busiest_window;
use common::redis_server::{Partition, RedisServer};
use dms_bridge::config::{QuotasConfig, Rate};
use dms_bridge::quotas::{
    Admission, SharedQuota, SharedQuotaStatus, SharedQuotaStore, SharedVendorQuota,
};
use dms_bridge::telemetry::metrics::Metrics;
use tokio_util::sync::CancellationToken;

const REPLICAS: u32 = 2;
/// Far above a Redis round trip on loopback, however loaded the machine.
const PATIENT: Duration = Duration::from_secs(2);
const HOUR: Duration = Duration::from_secs(3600);

/// One replica's view of a caller quota of `requests` per `per` with that
/// burst, asking Redis for at most `timeout`.
fn replica(
    redis: &RedisServer,
    (requests, per, burst): (u32, Duration, u32),
    timeout: Duration,
) -> (SharedQuota, Arc<SharedQuotaStore>, Arc<Metrics>) {
    let config = QuotasConfig {
        url: redis.url(),
        prefix: "test:quota:".into(),
        timeout,
        replicas: REPLICAS,
    };
    let metrics = Metrics::new();
    let store = SharedQuotaStore::new(&config, metrics.clone()).unwrap();
    let rate = Rate {
        requests,
        per,
        burst: Some(burst),
    };
    let quota = SharedQuota::new(store.clone(), "token", &rate, burst).unwrap();
    (quota, store, metrics)
}

/// `checks` checks of `key` from each of `tasks` tasks at once; how many were admitted.
async fn hammer(quota: Arc<SharedQuota>, key: &'static str, tasks: usize, checks: usize) -> usize {
    let workers: Vec<_> = (0..tasks)
        .map(|_| {
            let quota = quota.clone();
            tokio::spawn(async move {
                let mut admitted = 0;
                for _ in 0..checks {
                    match quota.check(key).await {
                        Admission::Allowed => admitted += 1,
                        Admission::Refused { retry_after } => assert!(
                            retry_after > Duration::ZERO && retry_after <= HOUR,
                            "{retry_after:?}"
                        ),
                    }
                }
                admitted
            })
        })
        .collect();
    let mut admitted = 0;
    for worker in workers {
        admitted += worker.await.unwrap();
    }
    admitted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_on_one_redis_share_one_quota() {
    let redis = RedisServer::start();
    let ten_an_hour = (10, HOUR, 10);
    let (a, _, metrics_a) = replica(&redis, ten_an_hour, PATIENT);
    let (b, _, metrics_b) = replica(&redis, ten_an_hour, PATIENT);
    // Taking turns: the burst of 10 is one between them, 5 each.
    let (mut by_a, mut by_b) = (0, 0);
    for _ in 0..10 {
        by_a += usize::from(a.check("alice").await == Admission::Allowed);
        by_b += usize::from(b.check("alice").await == Admission::Allowed);
    }
    assert_eq!((by_a, by_b), (5, 5));
    // All at once, 8 tasks on each: still exactly the burst.
    let (a, b) = (Arc::new(a), Arc::new(b));
    let (from_a, from_b) = tokio::join!(
        hammer(a.clone(), "bea", 8, 5),
        hammer(b.clone(), "bea", 8, 5)
    );
    assert_eq!(
        from_a + from_b,
        10,
        "{from_a} + {from_b} admitted of a burst of 10"
    );
    assert_eq!(
        metrics_a.quota_fallbacks.get() + metrics_b.quota_fallbacks.get(),
        0
    );
}

#[tokio::test]
async fn waiting_the_retry_after_is_admitted() {
    let redis = RedisServer::start();
    // One request every 2 s: Redis's own clock says when the next is due.
    let one_per_two_seconds = (1, Duration::from_secs(2), 1);
    let (a, _, _) = replica(&redis, one_per_two_seconds, PATIENT);
    let (b, _, _) = replica(&redis, one_per_two_seconds, PATIENT);
    for _ in 0..2 {
        assert_eq!(a.check("bob").await, Admission::Allowed);
        let Admission::Refused { retry_after } = b.check("bob").await else {
            panic!("the other replica admitted past the shared burst");
        };
        assert!(
            retry_after > Duration::ZERO && retry_after <= Duration::from_secs(2),
            "{retry_after:?}"
        );
        tokio::time::sleep(retry_after + Duration::from_millis(20)).await;
        assert_eq!(b.check("bob").await, Admission::Allowed);
        let Admission::Refused { .. } = a.check("bob").await else {
            panic!("the slot b took was given to a as well");
        };
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_redis_each_replica_keeps_its_share_then_shares_again() {
    let mut redis = RedisServer::start();
    let ten_an_hour = (10, HOUR, 10);
    let (a, store_a, metrics) = replica(&redis, ten_an_hour, PATIENT);
    let (b, _, _) = replica(&redis, ten_an_hour, PATIENT);
    let a = Arc::new(a);
    assert_eq!(a.check("carol").await, Admission::Allowed);
    assert_eq!(store_a.status(), SharedQuotaStatus::Shared);

    redis.kill();
    // The local share: 10 / 2 replicas = 5 an hour, burst 5.
    assert_eq!(hammer(a.clone(), "dave", 4, 5).await, 5);
    assert!(metrics.quota_fallbacks.get() >= 20);
    assert!(matches!(
        store_a.status(),
        SharedQuotaStatus::LocalShare { .. }
    ));

    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let _ = a.check("probe").await;
        if store_a.status() == SharedQuotaStatus::Shared {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still on the local share 30 s after Redis came back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Shared again: one replica gets the whole burst (its share is 5), the other none of it.
    let mut admitted = 0;
    for _ in 0..10 {
        admitted += usize::from(a.check("erin").await == Admission::Allowed);
    }
    assert_eq!(admitted, 10, "the whole burst once Redis was back");
    assert!(matches!(b.check("erin").await, Admission::Refused { .. }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_redis_costs_one_timeout_then_the_local_share_decides() {
    let redis = RedisServer::start();
    let timeout = Duration::from_millis(500);
    let (a, store, metrics) = replica(&redis, (10, HOUR, 10), timeout);
    assert_eq!(a.check("frank").await, Admission::Allowed);

    redis.pause();
    let started = Instant::now();
    let first = a.check("frank").await;
    let waited = started.elapsed();
    // The configured 500 ms, not the operating system's TCP timeouts (minutes).
    assert!(
        waited >= timeout && waited < Duration::from_secs(10),
        "a check waited {waited:?} on a hung Redis"
    );
    assert_eq!(first, Admission::Allowed);
    assert!(matches!(
        store.status(),
        SharedQuotaStatus::LocalShare { .. }
    ));
    // The next checks do not wait on Redis again (20 timeouts would take
    // 10 s), and stay within the local share: burst 5, the first included.
    let started = Instant::now();
    let mut admitted = 1;
    for _ in 0..20 {
        admitted += usize::from(a.check("frank").await == Admission::Allowed);
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "20 checks took {:?}",
        started.elapsed()
    );
    assert_eq!(admitted, 5, "{admitted} admitted on the local share");
    assert!(metrics.quota_fallbacks.get() >= 21);

    redis.resume();
    let deadline = Instant::now() + Duration::from_secs(30);
    while store.status() != SharedQuotaStatus::Shared {
        assert!(
            Instant::now() < deadline,
            "still on the local share after Redis answered again"
        );
        let _ = a.check("probe").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One replica's view of a vendor quota, reaching Redis at `url`, saying it is
/// present every second until the token is cancelled.
fn vendor_replica(
    url: &str,
    rate: Rate,
    margin: Duration,
) -> (
    Arc<SharedVendorQuota>,
    Arc<SharedQuotaStore>,
    CancellationToken,
) {
    let config = QuotasConfig {
        url: url.to_owned(),
        prefix: "test:quota:".into(),
        timeout: PATIENT,
        replicas: REPLICAS,
    };
    let store = SharedQuotaStore::new(&config, Metrics::new()).unwrap();
    let stop = CancellationToken::new();
    store.spawn_heartbeats(stop.clone());
    let quota = SharedVendorQuota::new(store.clone(), &rate, margin).unwrap();
    (Arc::new(quota), store, stop)
}

/// Checks `quota` every 20 ms until `stop`; when each request was admitted.
fn keep_checking(
    quota: Arc<SharedVendorQuota>,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<Vec<Instant>> {
    tokio::spawn(async move {
        let mut admitted = Vec::new();
        while !stop.is_cancelled() {
            if quota.check("dms").await == Admission::Allowed {
                admitted.push(Instant::now());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        admitted
    })
}

fn within(times: &[Instant], from: Instant, to: Instant) -> usize {
    times.iter().filter(|t| **t >= from && **t < to).count()
}

/// A partition between one replica and Redis while the other still reaches
/// it: the cut-off one decides alone only once the other no longer counts it
/// present and a window has passed, and rejoins only once what it sent alone
/// has left the window. In no window of the vendor's are there more than its
/// quota, before, during or after the partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_cut_off_from_redis_keeps_the_vendor_quota_with_the_others() {
    let redis = RedisServer::start();
    let partition = Partition::relay_to(redis.port).await;
    // 4 in any 2 s, burst 1; 200 ms of margin for the time between a decision
    // and its timestamp here. Alone, each replica keeps 2 of the 4.
    let rate = Rate {
        requests: 4,
        per: Duration::from_secs(2),
        burst: Some(1),
    };
    let margin = Duration::from_millis(200);
    let (a, _, stop_a) = vendor_replica(&redis.url(), rate, margin);
    let (b, store_b, stop_b) = vendor_replica(&partition.url, rate, margin);
    let (checking_a, checking_b) = (CancellationToken::new(), CancellationToken::new());
    let on_a = keep_checking(a, checking_a.clone());
    let on_b = keep_checking(b, checking_b.clone());

    tokio::time::sleep(Duration::from_secs(3)).await;
    let cut_at = Instant::now();
    partition.cut();
    tokio::time::sleep(Duration::from_secs(8)).await;
    let healed_at = Instant::now();
    partition.heal();
    let deadline = healed_at + Duration::from_secs(30);
    while store_b.status() != SharedQuotaStatus::Shared {
        assert!(Instant::now() < deadline, "b never shared again");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // a stops asking: the slots that come are b's to take through Redis.
    checking_a.cancel();
    let shared_again = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    checking_b.cancel();
    let (from_a, from_b) = (on_a.await.unwrap(), on_b.await.unwrap());
    stop_a.cancel();
    stop_b.cancel();

    let mut all: Vec<Instant> = from_a.iter().chain(&from_b).copied().collect();
    all.sort();
    let offsets = |times: &[Instant]| -> Vec<u128> {
        times
            .iter()
            .map(|t| t.duration_since(cut_at).as_millis())
            .collect()
    };
    assert!(
        busiest_window(&all, rate.per) <= 4,
        "more than 4 in 2 s; a: {:?}, b: {:?} (ms from the cut)",
        offsets(&from_a),
        offsets(&from_b)
    );
    // b was present until the cut: nothing alone for the presence TTL (3 s)
    // and a window (2.2 s) after its last word with Redis (at most 1 s before the cut).
    let free_from = cut_at + Duration::from_secs(4);
    assert_eq!(
        within(&from_b, cut_at, free_from),
        0,
        "b: {:?}",
        offsets(&from_b)
    );
    assert!(
        within(&from_b, free_from, healed_at) > 0,
        "b kept no share: {:?}",
        offsets(&from_b)
    );
    assert!(
        within(&from_a, free_from, healed_at) > 0,
        "a: {:?}",
        offsets(&from_a)
    );
    assert!(
        within(&from_b, shared_again, Instant::now()) > 0,
        "b: {:?}",
        offsets(&from_b)
    );
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
                "timeout = \"2s\"".into(),
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
        let response = common::http_get(format!("http://{addr}{route}"))
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    async fn fallbacks(addr: SocketAddr) -> f64 {
        common::process::metric(addr, "dms_bridge_quota_fallbacks_total").await
    }

    const NO_RETRIES: &str = "{ retries = { max = 0 } }";
    /// 6 an hour: nothing refills during a test (one call every 10 minutes).
    const SIX_AN_HOUR: &str = r#"per_token = { requests = 6, per = "1h", burst = 6 }"#;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_bridges_admit_one_token_quota_between_them() {
        let redis = RedisServer::start();
        let server = vendor().await;
        let shared = Setup {
            vendor: &server.uri(),
            resilience: NO_RETRIES,
            rate_limits: &[SIX_AN_HOUR],
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
            rate_limits: &[r#"anonymous = { requests = 3, per = "1h", burst = 3 }"#],
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
        // 4 in any second, burst 1, with 400 ms of headroom for the arrivals'
        // jitter: each bridge alone may send 4 every 1.4 s, two unshared
        // twice that; shared, the vendor never counts more than 4 in a second.
        let replicas = Replicas::start(&Setup {
            vendor: &server.uri(),
            resilience: r#"{ rate_limit = { requests = 4, per = "1s", burst = 1 }, quota_margin = "400ms", max_queue_wait = "300ms", retries = { max = 0 } }"#,
            rate_limits: &[],
            redis: Some(redis.url()),
        })
        .await;
        let mut callers = Vec::new();
        for _ in 0..3 {
            callers.extend(replicas.clients(Some("acme-token")).await);
        }
        let deadline = Instant::now() + Duration::from_secs(4);
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
        let offsets: Vec<u128> = times
            .iter()
            .map(|t| t.duration_since(times[0]).as_millis())
            .collect();
        assert!(
            busiest_window(&times, Duration::from_secs(1)) <= 4,
            "more than 4 in a second at the vendor: {offsets:?}"
        );
        assert!(times.len() >= 3, "the vendor saw too little: {offsets:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_redis_each_bridge_keeps_its_local_share() {
        let mut redis = RedisServer::start();
        let server = vendor().await;
        let replicas = Replicas::start(&Setup {
            vendor: &server.uri(),
            resilience: NO_RETRIES,
            rate_limits: &[SIX_AN_HOUR],
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

//! The customer data lifecycle (issue 34) on the real stores, SQLite and
//! PostgreSQL alike: customer data sealed at rest and read back through a
//! real MCP client; wrong or missing keys refused at start; a key rotation,
//! a retention purge and an erasure each cut short by SIGKILL that leave
//! every row whole and finish when run again (with two replicas on
//! PostgreSQL); the operator's `erase` and `audit` commands run as the real
//! binary; refused requests in the audit trail without their credential.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use chrono::{DateTime, Utc};
use common::leads::{accepting_intake, lead, leads, wait_delivery};
use common::{call, connect, ok, postgres, process};
use dms_bridge::store::Store;
use dms_bridge::store::leads::NewLead;
use dms_bridge::store::sealing::{Identity, Keyring, Sealing};
use serde_json::{Value, json};
use sqlx::Row;

const K1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const K2: &str = "2222222222222222222222222222222222222222222222222222222222222222";

/// `[store]` on `url`, sealing with `current` among `keys` (none: in the clear).
fn store_toml(url: &str, current: &str, keys: &[(&str, &str)]) -> String {
    let mut toml = format!("[store]\nurl = \"{url}\"\n");
    if !keys.is_empty() {
        let keys: Vec<String> = keys
            .iter()
            .map(|(id, key)| format!("{id} = {{ value = \"{key}\" }}"))
            .collect();
        toml.push_str(&format!(
            "\n[store.encryption]\ncurrent = \"{current}\"\nreseal_batch = 20\nkeys = {{ {} }}\n",
            keys.join(", ")
        ));
    }
    toml
}

fn sealing(current: &str, keys: &[(&str, &str)]) -> Sealing {
    let keys = keys
        .iter()
        .map(|(id, k)| ((*id).to_owned(), dms_bridge::config::key_bytes(k).unwrap()))
        .collect();
    Sealing::new(Some(Keyring::new(current, &keys).unwrap()))
}

/// A SQLite file in `dir`, and a fresh PostgreSQL database: every test runs on both.
async fn both_stores(dir: &std::path::Path) -> [String; 2] {
    [
        format!("sqlite://{}", dir.join("bridge.db").display()),
        postgres::fresh_database().await,
    ]
}

/// Every text value of every table that holds (or held) customer data.
async fn dump(url: &str) -> String {
    let store = Store::open(url).await.unwrap();
    let mut out = String::new();
    for table in [
        "leads",
        "lead_submissions",
        "lead_deliveries",
        "service_bookings",
        "events",
        "audit_log",
        "idempotency",
        "erasures",
    ] {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT * FROM {table}")))
            .fetch_all(store.pool())
            .await
            .unwrap();
        for row in &rows {
            for i in 0..row.len() {
                if let Ok(Some(text)) = row.try_get::<Option<String>, _>(i) {
                    out.push_str(&text);
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// `lead(…, n)` with a postal address, so that every kind of customer data is there.
fn lead_with_address(n: usize) -> Value {
    let mut args = lead("acme", n);
    args["customer"]["address"] = json!({
        "address_line_1": "1418 Larkspur Lane", "city": "Springfield", "state": "IL", "zip": "62704"
    });
    args
}

async fn count(store: &Store, sql: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_one(store.pool())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn customer_data_is_sealed_at_rest_and_reads_back_and_duplicates_are_still_found() {
    let dir = tempfile::tempdir().unwrap();
    for url in both_stores(dir.path()).await {
        let intake = accepting_intake().await;
        let config = leads(&intake.uri())
            .tail(&store_toml(&url, "k1", &[("k1", K1)]))
            .render();
        let bridge = common::with_config(&config).await;
        let client = connect(&bridge.url, Some("agent-token")).await;
        let first = ok(&call(&client, "leads.create", lead_with_address(7)).await);
        let lead_id = first["lead_id"].as_str().unwrap().to_owned();
        let view = wait_delivery(
            &client,
            "acme",
            &lead_id,
            "delivered",
            Duration::from_secs(20),
        )
        .await;
        // leads.get shows the contact points masked; the store opens them whole.
        assert_eq!(view["customer"]["email"], "d***@e***.com", "{view}");
        let keys = sealing("k1", &[("k1", K1)]);
        let store = Store::open(&url).await.unwrap().sealed(keys).await.unwrap();
        let stored = dms_bridge::store::leads::get(&store, "acme", &lead_id, None)
            .await
            .unwrap()
            .unwrap();
        assert!(
            stored.request.contains("dana7@example.com") && stored.request.contains("Larkspur")
        );
        // The CRM gets the document in the clear: sealing is the store's.
        let sent = intake.received_requests().await.unwrap();
        assert!(String::from_utf8_lossy(&sent[0].body).contains("Whitfield7"));
        // The same lead again is still recognised, through its keyed fingerprint.
        let again = ok(&call(&client, "leads.create", lead_with_address(7)).await);
        assert_eq!(again["status"], "duplicate", "{again}");
        assert_eq!(again["lead_id"], lead_id.as_str());

        let raw = dump(&url).await;
        for plain in [
            "dana7@example.com",
            "Whitfield7",
            "5550188",
            "Larkspur",
            "I agree that",
        ] {
            assert!(!raw.contains(plain), "{plain} is in the clear in {url}");
        }
        assert!(raw.contains("sealed:v1:k1:"), "nothing sealed in {url}");
        let store = Store::open(&url).await.unwrap();
        assert_eq!(
            count(&store, "SELECT COUNT(*) FROM leads WHERE contact_email IS NOT NULL AND contact_phone IS NOT NULL AND sealed_with = 'k1'").await,
            1
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_or_missing_key_refuses_to_start_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    for url in both_stores(dir.path()).await {
        let intake = accepting_intake().await;
        let config = |store: String| leads(&intake.uri()).tail(&store).render();
        {
            let bridge = common::with_config(&config(store_toml(&url, "k1", &[("k1", K1)]))).await;
            let client = connect(&bridge.url, Some("agent-token")).await;
            ok(&call(&client, "leads.create", lead("acme", 1)).await);
        }
        let refusals = [
            (
                store_toml(&url, "k1", &[("k1", K2)]),
                "is not the key this store knows",
            ),
            (store_toml(&url, "", &[]), "sealed with key(s) k1"),
            (
                store_toml(&url, "k2", &[("k2", K2)]),
                "\"k1\", which [store.encryption] does not list",
            ),
        ];
        for (store, wanted) in refusals {
            let cfg = dms_bridge::config::from_toml_str(&config(store)).unwrap();
            let runtime = dms_bridge::runtime::build(&cfg, std::path::Path::new(".")).unwrap();
            let cancel = tokio_util::sync::CancellationToken::new();
            let refused = runtime
                .start(&cancel)
                .await
                .err()
                .expect("started with the wrong keys");
            assert!(refused.to_string().contains(wanted), "{refused} ({wanted})");
            cancel.cancel();
        }
        // Both keys, the new one current: it starts, and the old lead reads.
        let both = config(store_toml(&url, "k2", &[("k1", K1), ("k2", K2)]));
        let bridge = common::with_config(&both).await;
        let reader = connect(&bridge.url, Some("reader-token")).await;
        let listed = ok(&call(&reader, "leads.list", json!({ "dealership_id": "acme" })).await);
        assert_eq!(listed["items"][0]["customer"]["name"], "D. W.", "{listed}");
        let store = bridge.gateway.store();
        let id = listed["items"][0]["lead_id"].as_str().unwrap();
        let stored = dms_bridge::store::leads::get(store, "acme", id, None)
            .await
            .unwrap()
            .unwrap();
        assert!(
            stored.request.contains("dana1@example.com"),
            "{}",
            stored.request
        );
    }
    // The binary says so and exits non-zero.
    let url = format!("sqlite://{}", dir.path().join("bridge.db").display());
    let intake = accepting_intake().await;
    let path = dir.path().join("wrong.toml");
    std::fs::write(
        &path,
        leads(&intake.uri())
            .tail(&store_toml(&url, "k1", &[("k1", K2)]))
            .render(),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
        .args(["serve", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("key \"k1\" is not the key this store knows by that id"),
        "{stderr}"
    );
}

/// `n` leads of `acme`, created `age` ago, delivered, straight into the
/// store under `sealing` (customer `i` has e-mail `c{i}@example.com`, or
/// `email` for all when given).
async fn seed_leads(
    url: &str,
    sealing: Sealing,
    n: usize,
    age: chrono::Duration,
    email: Option<&str>,
) -> Vec<String> {
    let store = Store::open(url)
        .await
        .unwrap()
        .sealed(sealing)
        .await
        .unwrap();
    let now = Utc::now() - age;
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let mut args = lead_with_address(i);
        if let Some(e) = email {
            args["customer"]["email"] = json!(e);
            args["vehicle_of_interest"]["year"] = json!(1990 + (i % 30));
            args["vehicle_of_interest"]["model"] = json!(format!("Model {i}"));
        } else {
            args["customer"]["email"] = json!(format!("c{i}@example.com"));
        }
        let lead: dms_bridge::leads::lead::Lead = serde_json::from_value(args.clone()).unwrap();
        let lead_id = dms_bridge::leads::new_lead_id();
        let new = NewLead {
            lead_id: lead_id.clone(),
            submission_id: uuid::Uuid::new_v4().simple().to_string(),
            dealership: "acme".into(),
            principal: "agent".into(),
            now,
            // No duplicate window: every seeded lead is a lead of its own.
            duplicate_since: Utc::now() + chrono::Duration::days(1),
            identity: dms_bridge::leads::customer_identity("acme", &lead),
            source_agent: "seed".into(),
            request: lead.to_stored().unwrap(),
            appointment: None,
            consent: serde_json::to_string(&lead.consent).unwrap(),
            upstream: "crm".into(),
            channel: "adf_http".into(),
            document: format!("<adf><customer>{}</customer></adf>", args["customer"]),
            traceparent: None,
        };
        dms_bridge::store::leads::accept(&store, &new)
            .await
            .unwrap();
        ids.push(lead_id);
    }
    let delivered = dms_bridge::store::ts(now);
    sqlx::query("UPDATE lead_deliveries SET state = 'delivered', delivered_at = $1 WHERE delivered_at IS NULL")
        .bind(delivered)
        .execute(store.pool())
        .await
        .unwrap();
    ids
}

/// Rows of `table` by the key that sealed them.
async fn by_key(store: &Store, table: &str) -> std::collections::BTreeMap<String, i64> {
    dms_bridge::store::reseal::counts(store).await.unwrap()[table].clone()
}

/// Polls `series` on the /metrics of each of `addrs` until one shows more
/// than zero; returns its index.
async fn first_working(addrs: &[std::net::SocketAddr], series: &str) -> usize {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        for (i, addr) in addrs.iter().enumerate() {
            if process::series(*addr, series)
                .await
                .is_some_and(|v| v > 0.0)
            {
                return i;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {series} within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Writes a serve config for `acme` on `url` with `store` settings, listening on `addr`.
fn serve_config(
    dir: &std::path::Path,
    name: &str,
    intake: &str,
    store: &str,
    addr: std::net::SocketAddr,
) -> std::path::PathBuf {
    let path = dir.join(name);
    let toml = leads(intake)
        .section("server", &format!("listen = \"{addr}\""))
        .tail(store)
        .render();
    std::fs::write(&path, toml).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotation_killed_midway_leaves_every_row_readable_and_another_replica_finishes_it() {
    const N: usize = 1500;
    let dir = tempfile::tempdir().unwrap();
    let intake = accepting_intake().await;
    for url in both_stores(dir.path()).await {
        let ids = seed_leads(
            &url,
            sealing("k1", &[("k1", K1)]),
            N,
            chrono::Duration::minutes(5),
            None,
        )
        .await;
        let rotated = store_toml(&url, "k2", &[("k1", K1), ("k2", K2)]);
        // Two replicas on PostgreSQL (one holds the reseal's lease); one process on SQLite.
        let replicas = if url.starts_with("postgres") { 2 } else { 1 };
        let addrs: Vec<_> = (0..replicas).map(|_| process::free_addr()).collect();
        let mut children = Vec::new();
        for (i, addr) in addrs.iter().enumerate() {
            let config = serve_config(
                dir.path(),
                &format!("rotated{i}.toml"),
                &intake.uri(),
                &rotated,
                *addr,
            );
            children.push(process::start_bridge(&config, *addr).await);
        }
        let busy = first_working(&addrs, "dms_bridge_resealed_rows_total{kind=\"leads\"}").await;
        children[busy].start_kill().unwrap();
        children[busy].wait().await.unwrap();

        // Mid-rotation: every row opens, under one key or the other.
        let store = Store::open(&url)
            .await
            .unwrap()
            .sealed(sealing("k2", &[("k1", K1), ("k2", K2)]))
            .await
            .unwrap();
        let leads = by_key(&store, "leads").await;
        assert_eq!(leads.values().sum::<i64>(), N as i64, "{leads:?}");
        assert!(
            leads.get("k2").copied().unwrap_or_default() > 0,
            "{leads:?}"
        );
        for id in ids.iter().step_by(50) {
            let lead = dms_bridge::store::leads::get(&store, "acme", id, None)
                .await
                .unwrap()
                .unwrap();
            assert!(lead.request.contains("@example.com"), "{}", lead.request);
        }

        // What is left is finished: by the other replica, or by a restart.
        if replicas == 1 {
            let config = dir.path().join("rotated0.toml");
            children[0] = process::start_bridge(&config, addrs[0]).await;
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
        loop {
            let counts = dms_bridge::store::reseal::counts(&store).await.unwrap();
            let old = counts.values().filter_map(|c| c.get("k1")).sum::<i64>();
            let keys = dms_bridge::store::sealing::known_keys(&store)
                .await
                .unwrap();
            if old == 0 && keys.iter().any(|k| k.id == "k1" && k.retired) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "rotation never finished: {counts:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        drop(children);
        // The old key retired, the config may drop it.
        let only_new = Store::open(&url)
            .await
            .unwrap()
            .sealed(sealing("k2", &[("k2", K2)]))
            .await
            .unwrap();
        let lead = dms_bridge::store::leads::get(&only_new, "acme", &ids[N - 1], None)
            .await
            .unwrap()
            .unwrap();
        assert!(lead.request.contains(&format!("c{}@example.com", N - 1)));
    }
}

/// Every lead is whole: details with their delivery, or minimised without one.
async fn assert_leads_whole(store: &Store) {
    let rows: Vec<(String, Option<String>, i64)> = sqlx::query_as(
        "SELECT l.lead_id, l.minimised_at, (SELECT COUNT(*) FROM lead_deliveries d WHERE d.lead_id = l.lead_id) FROM leads l",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    for (id, minimised, deliveries) in rows {
        let stored = dms_bridge::store::leads::request_of(store, &id)
            .await
            .unwrap()
            .unwrap();
        match minimised {
            None => assert_eq!(deliveries, 1, "{id} lost its delivery"),
            Some(_) => {
                assert_eq!(deliveries, 0, "{id} kept its delivery");
                assert!(
                    !stored.contains("vehicle_of_interest") && !stored.contains("Larkspur"),
                    "{stored}"
                );
                assert!(
                    stored.contains("@example.com") && stored.contains("consent_text"),
                    "{stored}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purge_removes_each_kind_past_its_retention_and_survives_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let intake = accepting_intake().await;
    let day = chrono::Duration::days(1);
    for url in both_stores(dir.path()).await {
        let keys = sealing("k1", &[("k1", K1)]);
        let details_gone = seed_leads(&url, keys.clone(), 600, day * 800, None).await;
        let all_gone = seed_leads(&url, keys.clone(), 3, day * 2000, None).await;
        let document_gone = seed_leads(&url, keys.clone(), 2, day * 100, None).await;
        let kept = seed_leads(&url, keys.clone(), 2, day, None).await;
        let store = Store::open(&url)
            .await
            .unwrap()
            .sealed(keys.clone())
            .await
            .unwrap();
        seed_other_kinds(&store, Utc::now() - day * 800, Utc::now() - day).await;

        // A purge in small batches, killed once it has begun: on PostgreSQL
        // one of two replicas (the one holding the purge's lease), and the
        // other takes the purge over; on SQLite the one process.
        let purging = store_toml(&url, "k1", &[("k1", K1)]) + "\n[retention]\nbatch = 10\n";
        let replicas = if url.starts_with("postgres") { 2 } else { 1 };
        let addrs: Vec<_> = (0..replicas).map(|_| process::free_addr()).collect();
        let mut children = Vec::new();
        for (i, addr) in addrs.iter().enumerate() {
            let name = format!("purge{i}.toml");
            let config = serve_config(dir.path(), &name, &intake.uri(), &purging, *addr);
            children.push(process::start_bridge(&config, *addr).await);
        }
        let busy = first_working(
            &addrs,
            "dms_bridge_retention_purged_rows_total{kind=\"leads\"}",
        )
        .await;
        children[busy].start_kill().unwrap();
        children[busy].wait().await.unwrap();
        assert_leads_whole(&store).await;
        if replicas == 2 {
            let minimised = "SELECT COUNT(*) FROM leads WHERE minimised_at IS NOT NULL";
            let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
            while count(&store, minimised).await < 600 {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the other replica never took over"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            assert_leads_whole(&store).await;
        }
        drop(children);

        // The rest, by one pass to the end.
        let purger = dms_bridge::lifecycle::purge::Purger {
            store: store.clone(),
            retention: Default::default(),
            metrics: dms_bridge::telemetry::metrics::Metrics::new(),
        };
        purger.pass(Utc::now(), &Default::default()).await.unwrap();
        assert_leads_whole(&store).await;
        let get = |id: &String| {
            let store = store.clone();
            let id = id.clone();
            async move {
                dms_bridge::store::leads::get(&store, "acme", &id, None)
                    .await
                    .unwrap()
            }
        };
        // Past `leads`: out of every read, the consent proof kept.
        for id in &details_gone {
            assert!(get(id).await.is_none());
        }
        assert_eq!(
            count(
                &store,
                "SELECT COUNT(*) FROM leads WHERE minimised_at IS NOT NULL"
            )
            .await,
            600
        );
        assert_eq!(
            count(&store, "SELECT COUNT(*) FROM lead_submissions").await,
            604
        );
        // Past `consent_grants`: nothing at all.
        for id in &all_gone {
            let left = count(
                &store,
                &format!("SELECT COUNT(*) FROM lead_submissions WHERE lead_id = '{id}'"),
            )
            .await
                + count(
                    &store,
                    &format!("SELECT COUNT(*) FROM leads WHERE lead_id = '{id}'"),
                )
                .await
                + count(
                    &store,
                    &format!("SELECT COUNT(*) FROM events WHERE resource_id = '{id}'"),
                )
                .await;
            assert_eq!(left, 0, "{id}");
        }
        // Past `lead_documents`: the lead reads, its document is gone.
        for id in &document_gone {
            assert!(get(id).await.is_some());
            let doc: String =
                sqlx::query_scalar("SELECT document FROM lead_deliveries WHERE lead_id = $1")
                    .bind(id)
                    .fetch_one(store.pool())
                    .await
                    .unwrap();
            assert_eq!(doc, "");
        }
        for id in &kept {
            let lead = get(id).await.unwrap();
            assert!(lead.request.contains("Larkspur"));
        }
        // Bookings, audit rows and departed units: the old go, the recent stay.
        assert_eq!(
            count(&store, "SELECT COUNT(*) FROM service_bookings").await,
            1
        );
        assert_eq!(
            count(
                &store,
                "SELECT COUNT(*) FROM audit_log WHERE tool = 'seeded'"
            )
            .await,
            1
        );
        assert_eq!(count(&store, "SELECT COUNT(*) FROM mirror_units").await, 2);
    }
}

/// A booking `id` made at `at` by a customer with e-mail `email`, as it is being sent.
async fn book(store: &Store, id: &str, at: DateTime<Utc>, email: &str) {
    let identity = Identity {
        email: Some(email.into()),
        ..Identity::default()
    };
    let booking = dms_bridge::store::bookings::NewBooking {
        booking_id: id,
        dealership: "acme",
        principal: "agent",
        idempotency_key: None,
        now: at,
        send_after: at,
        consent: "{}",
        request: "{}",
        identity,
    };
    dms_bridge::store::bookings::begin(store, &booking)
        .await
        .unwrap();
}

/// Two bookings, two audit rows, three mirror units: one of each `old`, the rest `recent`.
async fn seed_other_kinds(store: &Store, old: DateTime<Utc>, recent: DateTime<Utc>) {
    for (i, at) in [old, recent].into_iter().enumerate() {
        let id = format!("bk_{i}");
        book(store, &id, at, "b@example.com").await;
        dms_bridge::store::bookings::settle(store, &id, "booked", Some(&format!("ap_{i}")), at)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO audit_log (at, trace_id, principal, tool, outcome, latency_us, cache_hit, arg_shape)
             VALUES ($1, 't', 'p', 'seeded', 'ok', 1, 0, '[]')",
        )
        .bind(dms_bridge::store::ts(at))
        .execute(store.pool())
        .await
        .unwrap();
    }
    for (id, state, at) in [
        ("v1", "gone", old),
        ("v2", "gone", recent),
        ("v3", "listed", old),
    ] {
        sqlx::query(
            "INSERT INTO mirror_units (dealership, vehicle_id, schema_version, state, changed_at)
             VALUES ('acme', $1, 1, $2, $3)",
        )
        .bind(id)
        .bind(state)
        .bind(dms_bridge::store::ts(at))
        .execute(store.pool())
        .await
        .unwrap();
    }
}

/// `dms-bridge <args>` to its end: (success, stdout, stderr).
fn run_cli(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
        .args(args)
        .env("DMS_BRIDGE_LOG", "error")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_customer_is_erased_by_email_and_phone_after_a_dry_run_and_the_erasure_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    for url in both_stores(dir.path()).await {
        // A CRM that is down, retried only much later: the leads stay queued.
        let intake = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(wiremock::ResponseTemplate::new(503))
            .mount(&intake)
            .await;
        let store_cfg = store_toml(&url, "k1", &[("k1", K1)]);
        let toml = leads(&intake.uri())
            .section("leads", r#"delivery = { max_attempts = 50, base_delay = "1h", max_delay = "2h", lease = "8s", concurrency = 4 }"#)
            .tail(&store_cfg)
            .render();
        let path = dir.path().join("erase.toml");
        std::fs::write(&path, &toml).unwrap();
        let bridge = common::with_config(&toml).await;
        let client = connect(&bridge.url, Some("agent-token")).await;
        let create = |args: Value| {
            let client = &client;
            async move {
                let answer = call(client, "leads.create", args).await;
                assert_ne!(answer.is_error, Some(true), "{answer:?}");
                ok(&answer)["lead_id"].as_str().unwrap().to_owned()
            }
        };
        // Customer X: one lead by e-mail and phone, one with another e-mail and X's phone.
        let x1 = create(lead_with_address(1)).await;
        let x2 = create(lead("acme", 2)).await;
        // Customer Y: another phone and e-mail.
        let mut other = lead("acme", 3);
        other["customer"]["phone"] = json!("+15125550999");
        let y = create(other).await;
        let store = Store::open(&url)
            .await
            .unwrap()
            .sealed(sealing("k1", &[("k1", K1)]))
            .await
            .unwrap();
        book(&store, "bk_x", Utc::now(), "DANA1@example.com ").await;
        let config = path.to_str().unwrap();
        let before = rows_of_customer_data(&store).await;

        let (ran, out, err) = run_cli(&[
            "erase",
            "--config",
            config,
            "--email",
            "dana1@example.com",
            "--phone",
            "512.555.0188",
            "--dry-run",
        ]);
        assert!(ran, "{err}");
        for id in [&x1, &x2, &"bk_x".to_owned()] {
            assert!(
                out.contains("Would erase") && out.contains(id.as_str()),
                "{id}: {out}"
            );
        }
        assert!(!out.contains(&y), "{out}");
        assert!(out.contains("would be cancelled"), "{out}");
        assert_eq!(
            rows_of_customer_data(&store).await,
            before,
            "the dry run changed the store"
        );

        let (ran, out, err) = run_cli(&[
            "erase",
            "--config",
            config,
            "--email",
            "dana1@example.com",
            "--phone",
            "512.555.0188",
            "--reference",
            "DSR-1042",
            "--requested-by",
            "privacy-desk",
        ]);
        assert!(ran, "{err}");
        assert!(
            out.contains(&format!("Erased lead {x1}")) && out.contains("cancelled"),
            "{out}"
        );
        for id in [&x1, &x2] {
            for table in ["leads", "lead_submissions", "lead_deliveries"] {
                assert_eq!(
                    count(
                        &store,
                        &format!("SELECT COUNT(*) FROM {table} WHERE lead_id = '{id}'")
                    )
                    .await,
                    0,
                    "{table} {id}"
                );
            }
            assert_eq!(
                count(
                    &store,
                    &format!("SELECT COUNT(*) FROM events WHERE resource_id = '{id}'")
                )
                .await,
                0
            );
        }
        assert_eq!(
            count(&store, "SELECT COUNT(*) FROM service_bookings").await,
            0
        );
        let reader = connect(&bridge.url, Some("reader-token")).await;
        let listed = ok(&call(&reader, "leads.list", json!({ "dealership_id": "acme" })).await);
        assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
        assert_eq!(listed["items"][0]["lead_id"], y.as_str());
        assert_eq!(count(&store, &format!("SELECT COUNT(*) FROM lead_deliveries WHERE lead_id = '{y}' AND state = 'pending'")).await, 1);

        // The record says who, when, why and how many, and nothing of the customer.
        let (_, records, _) = run_cli(&["erasures", "--config", config]);
        let record: Value = serde_json::from_str(records.lines().next().unwrap()).unwrap();
        assert_eq!(record["reference"], "DSR-1042");
        assert_eq!(record["requested_by"], "privacy-desk");
        assert_eq!(record["erased"]["leads"], 2);
        assert_eq!(record["erased"]["bookings"], 1);
        for plain in ["dana1", "Whitfield1", "0188", "Larkspur"] {
            assert!(
                !records.contains(plain) && !dump(&url).await.contains(plain),
                "{plain}"
            );
        }
        // Erasing again finds nothing.
        let (_, out, _) = run_cli(&["erase", "--config", config, "--email", "dana1@example.com"]);
        assert!(out.contains("nothing to erase"), "{out}");
    }
}

/// Rows of each table holding customer data.
async fn rows_of_customer_data(store: &Store) -> Vec<i64> {
    let mut out = Vec::new();
    for table in [
        "leads",
        "lead_submissions",
        "lead_deliveries",
        "service_bookings",
        "events",
        "erasures",
    ] {
        out.push(count(store, &format!("SELECT COUNT(*) FROM {table}")).await);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erasure_killed_midway_erases_all_of_the_customer_or_nothing() {
    const N: usize = 1500;
    let dir = tempfile::tempdir().unwrap();
    let intake = accepting_intake().await;
    for url in both_stores(dir.path()).await {
        seed_leads(
            &url,
            sealing("k1", &[("k1", K1)]),
            N,
            chrono::Duration::minutes(1),
            Some("kill@example.com"),
        )
        .await;
        let path = dir.path().join("kill.toml");
        std::fs::write(
            &path,
            leads(&intake.uri())
                .tail(&store_toml(&url, "k1", &[("k1", K1)]))
                .render(),
        )
        .unwrap();
        let store = Store::open(&url).await.unwrap();
        let mut delay = 30;
        loop {
            let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
                .args([
                    "erase",
                    "--config",
                    path.to_str().unwrap(),
                    "--email",
                    "kill@example.com",
                ])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            tokio::time::sleep(Duration::from_millis(delay)).await;
            let killed = child.start_kill().is_ok();
            let status = child.wait().await.unwrap();
            let leads = count(&store, "SELECT COUNT(*) FROM leads").await;
            let submissions = count(&store, "SELECT COUNT(*) FROM lead_submissions").await;
            let records = count(&store, "SELECT COUNT(*) FROM erasures").await;
            if leads == 0 {
                assert_eq!((submissions, records), (0, 1));
                break;
            }
            assert_eq!(
                (leads, submissions, records),
                (N as i64, N as i64, 0),
                "half erased after {delay} ms (killed: {killed}, {status})"
            );
            delay *= 2;
            assert!(delay < 60_000, "the erasure never finished");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_trail_lists_tool_calls_and_refused_requests_without_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("audit.db").display());
    let intake = accepting_intake().await;
    let toml = leads(&intake.uri())
        .section("server", "max_request_bytes = 4096")
        .tail(&store_toml(&url, "k1", &[("k1", K1)]))
        .render();
    let path = dir.path().join("audit.toml");
    std::fs::write(&path, &toml).unwrap();
    let bridge = common::with_config(&toml).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    ok(&call(&client, "leads.create", lead("acme", 1)).await);
    let http = dms_bridge::net::client_builder().build().unwrap();
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let post = |auth: &str| {
        http.post(&bridge.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("authorization", format!("Bearer {auth}"))
    };
    let statuses = [
        post("forged-secret-8d1f")
            .json(&list)
            .send()
            .await
            .unwrap()
            .status(),
        post("agent-token")
            .header("origin", "https://evil.example")
            .json(&list)
            .send()
            .await
            .unwrap()
            .status(),
        post("agent-token")
            .body("x".repeat(10_000))
            .send()
            .await
            .unwrap()
            .status(),
        post("agent-token")
            .header("host", "bridge.evil.example")
            .json(&list)
            .send()
            .await
            .unwrap()
            .status(),
    ];
    assert_eq!(statuses.map(|s| s.as_u16()), [401, 403, 413, 403]);
    // The audit writer commits in batches: wait until all five rows are in.
    let store = bridge.gateway.store();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while count(store, "SELECT COUNT(*) FROM audit_log").await < 5 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "audit rows not written"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let config = path.to_str().unwrap();
    let (ran, jsonl, err) = run_cli(&["audit", "--config", config, "--format", "jsonl"]);
    assert!(ran, "{err}");
    assert!(
        !jsonl.contains("forged-secret") && !jsonl.contains("agent-token"),
        "{jsonl}"
    );
    let rows: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcome = |tool: &str, outcome: &str| {
        rows.iter()
            .any(|r| r["tool"] == tool && r["outcome"] == outcome)
    };
    assert!(outcome("leads.create", "ok"), "{jsonl}");
    for class in [
        "refused.token_invalid",
        "refused.origin_not_allowed",
        "refused.body_too_large",
        "refused.host_not_allowed",
    ] {
        assert!(outcome("front_door", class), "{class}: {jsonl}");
    }
    let refused = rows
        .iter()
        .find(|r| r["outcome"] == "refused.token_invalid")
        .unwrap();
    assert_eq!(refused["principal"], "anonymous");
    assert_eq!(refused["arg_shape"][0], "POST /mcp");
    // Every row names the door: the call and the four refusals came by MCP.
    assert!(rows.iter().all(|r| r["door"] == "mcp"), "{jsonl}");
    let by_door = |door: &str| {
        run_cli(&[
            "audit", "--config", config, "--format", "jsonl", "--door", door,
        ])
    };
    assert_eq!(by_door("mcp").1.lines().count(), 5);
    assert_eq!(by_door("aap").1, "");
    let (ran, _, err) = by_door("a2a");
    assert!(
        !ran && err.contains("\"a2a\" is no door: use mcp, aap or kit"),
        "{err}"
    );

    let (_, only_refused, _) = run_cli(&[
        "audit",
        "--config",
        config,
        "--format",
        "jsonl",
        "--outcome",
        "refused",
    ]);
    assert_eq!(only_refused.lines().count(), 4, "{only_refused}");
    let (_, agent, _) = run_cli(&[
        "audit",
        "--config",
        config,
        "--format",
        "jsonl",
        "--principal",
        "agent",
        "--tool",
        "leads.create",
    ]);
    assert_eq!(agent.lines().count(), 1, "{agent}");
    let (_, table, _) = run_cli(&["audit", "--config", config, "--dealership", "acme"]);
    let mut lines = table.lines();
    assert!(lines.next().unwrap().starts_with("AT "), "{table}");
    let row = lines.next().unwrap();
    assert!(
        row.contains("leads.create") && row.contains(" mcp "),
        "{table}"
    );
    let (_, future, _) = run_cli(&[
        "audit",
        "--config",
        config,
        "--since",
        "2999-01-01T00:00:00Z",
        "--format",
        "jsonl",
    ]);
    assert_eq!(future, "");
}

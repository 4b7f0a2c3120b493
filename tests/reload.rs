//! Credentials reload without a restart, on the real binary: a token and an
//! upstream's client secret rotated under load lose no call; SIGHUP and a
//! changed secret file each reload; a reload naming a missing secret file, or
//! a change that needs a restart, changes nothing and says why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common;
use common::config::{BridgeConfig, Dealership, Token, Upstream, quoted};
use common::process::free_addr;
use common::{TOKEN_PATH, call, connect};
use serde_json::json;
use tokio::process::Child;

/// `acme`'s inventory read through (no mirror, no cache) from a CDK-shaped
/// upstream whose client secret is in the file `cdk-secret`; the token
/// `rotated` in the file `agent-token`, and `load-token` inline.
fn config(listen: SocketAddr, dir: &Path, upstream: &str, client_secret_file: &str) -> String {
    BridgeConfig::new()
        .no_cache()
        .section(
            "server",
            &format!("listen = {}", quoted(&listen.to_string())),
        )
        .section(
            "store",
            &format!(
                "url = {}",
                quoted(&format!("sqlite://{}", dir.join("bridge.db").display()))
            ),
        )
        .dealership(Dealership::acme().route("inventory", "cdk"))
        .upstream(
            "cdk",
            Upstream::cdk(upstream)
                .set(
                    "client_secret",
                    format!("{{ file = {} }}", quoted(client_secret_file)),
                )
                .set("inventory_sync", quoted("off")),
        )
        .token(Token::new(
            "load",
            "load-token",
            &["acme"],
            &["amcp:inventory:read"],
        ))
        .token(
            Token::new("rotated", "unused", &["acme"], &["amcp:inventory:read"])
                .set("secret", r#"{ file = "agent-token" }"#),
        )
        .render()
}

/// The bridge with its log (info) in `dir/bridge.log`.
async fn start(config: &Path, addr: SocketAddr, dir: &Path) -> Child {
    let log = dir.join("bridge.log");
    common::process::start_bridge_logging(config, addr, &[("DMS_BRIDGE_LOG", "info")], &log).await
}

fn log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("bridge.log")).unwrap()
}

/// Waits until the log has `count` lines holding every one of `parts`.
async fn logged(dir: &Path, parts: &[&str], count: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = log(dir);
        let lines = text
            .lines()
            .filter(|l| parts.iter().all(|p| l.contains(p)))
            .count();
        if lines >= count {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "no {count} lines with {parts:?} in:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn hangup(child: &Child) {
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// The answer to an `initialize` with `token`: 200 when the bridge knows it.
async fn initialize_status(url: &str, token: &str) -> u16 {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": { "name": "reload-test", "version": "1" } } });
    reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn until_known(url: &str, token: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while initialize_status(url, token).await != 200 {
        assert!(Instant::now() < deadline, "{token} never became known");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The client secrets the upstream's token endpoint received, in order.
async fn secrets_sent(server: &wiremock::MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == TOKEN_PATH)
        .filter_map(|r| {
            // HTTP Basic (`client_id:client_secret`), as CDK's profile sends them, or a form field.
            let basic = r
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok()?.strip_prefix("Basic ").map(str::to_owned))
                .and_then(|b64| {
                    use base64::Engine;
                    let pair = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
                    Some(String::from_utf8(pair).ok()?.split_once(':')?.1.to_owned())
                });
            basic.or_else(|| {
                url::form_urlencoded::parse(&r.body)
                    .find(|(k, _)| k == "client_secret")
                    .map(|(_, v)| v.into_owned())
            })
        })
        .collect()
}

/// Calls `inventory.search` as `load` from `workers` clients until `stop`.
fn load(
    url: &str,
    workers: usize,
    stop: &Arc<AtomicBool>,
) -> (Arc<AtomicUsize>, Vec<tokio::task::JoinHandle<Vec<String>>>) {
    let ok = Arc::new(AtomicUsize::new(0));
    let tasks = (0..workers)
        .map(|_| {
            let (url, stop, ok) = (url.to_owned(), stop.clone(), ok.clone());
            tokio::spawn(async move {
                let client = connect(&url, Some("load-token")).await;
                let mut failures = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let answer = call(
                        &client,
                        "inventory.search",
                        json!({ "dealership_id": "acme", "limit": 3 }),
                    )
                    .await;
                    if answer.is_error == Some(true) {
                        failures.push(format!("{answer:?}"));
                    } else {
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                }
                failures
            })
        })
        .collect();
    (ok, tasks)
}

/// Waits until `ok` counts `at_least` calls (or panics after 60 s): the load
/// is measured in calls, not in time, so a slow machine only takes longer.
async fn until_calls(ok: &AtomicUsize, at_least: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while ok.load(Ordering::Relaxed) < at_least {
        assert!(
            Instant::now() < deadline,
            "the load made {} calls of {at_least}",
            ok.load(Ordering::Relaxed)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotations_under_load_lose_no_call_and_a_bad_reload_changes_nothing() {
    let (upstream, _inventory) = common::inventory::upstream(50).await;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(dir, "agent-token", "token-one-0001\n");
    write(dir, "cdk-secret", "secret-one\n");
    let addr = free_addr();
    let path = write(
        dir,
        "bridge.toml",
        &config(addr, dir, &upstream.uri(), "cdk-secret"),
    );
    let bridge = start(&path, addr, dir).await;
    let url = format!("http://{addr}/mcp");
    assert_eq!(initialize_status(&url, "token-one-0001").await, 200);

    // Under load from four clients, both secrets change and SIGHUP is sent.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, workers) = load(&url, 4, &stop);
    // Calls are going through before the rotation, however slow the machine.
    until_calls(&ok, 20).await;
    write(dir, "agent-token", "token-two-0002\n");
    write(dir, "cdk-secret", "secret-two\n");
    hangup(&bridge);
    until_known(&url, "token-two-0002").await;
    let at_reload = ok.load(Ordering::Relaxed);
    until_calls(&ok, at_reload + 20).await;
    stop.store(true, Ordering::Relaxed);
    let mut failures = Vec::new();
    for worker in workers {
        failures.extend(worker.await.unwrap());
    }
    assert!(
        failures.is_empty(),
        "calls failed across the reload: {failures:?}"
    );
    assert_eq!(
        initialize_status(&url, "token-one-0001").await,
        401,
        "the old token is gone"
    );
    logged(dir, &["Reloaded the credentials", "SIGHUP"], 1).await;
    // Calls after the reload fetched the upstream's access token with the new secret.
    let sent = secrets_sent(&upstream).await;
    assert_eq!(
        sent.first().map(String::as_str),
        Some("secret-one"),
        "{sent:?}"
    );
    assert_eq!(
        sent.last().map(String::as_str),
        Some("secret-two"),
        "{sent:?}"
    );

    // A secret file that changes reloads without a signal.
    write(dir, "agent-token", "token-three-0003\n");
    until_known(&url, "token-three-0003").await;
    logged(dir, &["Reloaded the credentials", "file change"], 1).await;

    // A config naming a missing secret file: refused, and nothing changes.
    write(
        dir,
        "bridge.toml",
        &config(addr, dir, &upstream.uri(), "no-such-secret"),
    );
    hangup(&bridge);
    let text = logged(dir, &["Reload refused", "cannot read secret file"], 1).await;
    assert!(text.contains("upstreams.cdk.client_secret"), "{text}");
    assert_eq!(initialize_status(&url, "token-three-0003").await, 200);
    let client = connect(&url, Some("load-token")).await;
    let answer = call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "acme", "limit": 3 }),
    )
    .await;
    assert_ne!(answer.is_error, Some(true), "{answer:?}");

    // A change only a restart can apply (the listen address): refused, named.
    let moved = config(free_addr(), dir, &upstream.uri(), "cdk-secret");
    write(dir, "bridge.toml", &moved);
    hangup(&bridge);
    logged(dir, &["Reload refused", "need a restart", "[server]"], 1).await;
    assert_eq!(initialize_status(&url, "token-three-0003").await, 200);
}

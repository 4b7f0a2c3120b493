//! The real `dms-bridge` binary as a separate process, for tests about what
//! holds across processes (a kill, two replicas on one store).

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

/// A loopback port free right now (the bridge binds it a moment later).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A loopback address on a free port.
pub fn free_addr() -> SocketAddr {
    format!("127.0.0.1:{}", free_port()).parse().unwrap()
}

/// `dms-bridge serve --config config` with `env` set and its log written to
/// `log`, once `addr` answers `/healthz`; for tests that read the log or
/// set what only the process environment can (OTLP export).
pub async fn start_bridge_logging(
    config: &std::path::Path,
    addr: SocketAddr,
    env: &[(&str, &str)],
    log: &std::path::Path,
) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
        .args(["serve", "--config"])
        .arg(config)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    up_or_exited(&mut child, addr).await;
    child
}

/// Starts `dms-bridge serve --config config` and waits until `addr` answers `/healthz`.
pub async fn start_bridge(config: &std::path::Path, addr: SocketAddr) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
        .args(["serve", "--config"])
        .arg(config)
        .env("DMS_BRIDGE_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    up_or_exited(&mut child, addr).await;
    child
}

/// Waits until `child` answers `/healthz` on `addr`; a child that exits
/// first (a port taken between `free_addr` and its bind, a bad config) is a
/// failure at once, with its exit status, not 60 s later.
async fn up_or_exited(child: &mut Child, addr: SocketAddr) {
    let waiting = wait_healthy(addr);
    tokio::pin!(waiting);
    tokio::select! {
        () = &mut waiting => {}
        status = child.wait() => panic!(
            "the bridge for {addr} exited before answering: {:?} (its stderr says why)",
            status.map_err(|e| e.to_string())
        ),
    }
}

/// Waits until the bridge at `addr` answers `/healthz` (or panics after 60 s).
pub async fn wait_healthy(addr: SocketAddr) {
    let healthz = format!("http://{addr}/healthz");
    // A debug binary starting beside a build on one loaded core can take a while.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if super::http_get(&healthz)
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the bridge did not come up on {addr} within 60 s");
}

/// The value of the unlabelled metric `name` on the `/metrics` of the bridge at `addr`.
pub async fn metric(addr: SocketAddr, name: &str) -> f64 {
    series(addr, name)
        .await
        .unwrap_or_else(|| panic!("no {name} on the /metrics of {addr}"))
}

/// The value of one series (`name` or `name{labels…}` as the exposition
/// writes it) on the `/metrics` of the bridge at `addr`, if it is there.
pub async fn series(addr: SocketAddr, series: &str) -> Option<f64> {
    let text = super::http_get(format!("http://{addr}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

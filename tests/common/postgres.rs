//! A throwaway PostgreSQL for the tests: one cluster per test binary
//! (`initdb` into a temporary directory, `pg_ctl start` on a free loopback
//! port), one fresh database per bridge. A watcher process stops the cluster
//! and removes its directory once the test binary has exited, however it
//! exits. Without the server binaries the tests fail: they never skip.
//!
//! `DMS_BRIDGE_TEST_STORE=postgres` puts every bridge that would use
//! `sqlite::memory:` on a fresh database of this cluster instead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::Connection;

/// The environment switch, and its one value besides `sqlite` (the default).
const SWITCH: &str = "DMS_BRIDGE_TEST_STORE";

/// Whether `DMS_BRIDGE_TEST_STORE` asks for PostgreSQL.
pub fn selected() -> bool {
    match std::env::var(SWITCH).as_deref() {
        Ok("postgres") => true,
        Ok("sqlite") | Ok("") | Err(_) => false,
        Ok(other) => panic!("{SWITCH}={other:?}: use postgres or sqlite"),
    }
}

/// A running cluster: the one this binary shares, or a private one.
pub struct Cluster {
    port: u16,
    bin: PathBuf,
    dir: PathBuf,
    data: PathBuf,
    log: PathBuf,
    options: String,
}

/// A new, empty database on this binary's shared cluster, as a store URL.
pub async fn fresh_database() -> String {
    shared().fresh_database().await
}

fn shared() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(Cluster::start)
}

impl Cluster {
    /// A cluster of its own, for a test that restarts it: restarting the
    /// shared one would cut the connections of every test running beside it.
    /// Stopped and removed when dropped (and by its watcher, should the test
    /// binary die first).
    pub fn private() -> Cluster {
        Cluster::start()
    }

    fn start() -> Cluster {
        let bin = server_binaries();
        let dir = PathBuf::from(run(
            as_server_user(Command::new("mktemp")).args(["-d", "/tmp/dms-bridge-pg.XXXXXX"])
        ));
        let data = dir.join("data");
        run(as_server_user(Command::new(bin.join("initdb")))
            .args(["--auth=trust", "--username=postgres", "--no-sync"])
            .arg("--encoding=UTF8")
            .arg("-D")
            .arg(&data));
        watch_until_exit(&bin, &dir);
        let port = free_port();
        // Durability is not under test: no fsync makes every commit cheap.
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300 \
             -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            dir.display()
        );
        let log = dir.join("server.log");
        run(as_server_user(Command::new(bin.join("pg_ctl")))
            .args(["start", "-w", "-t", "60", "-o", &options, "-D"])
            .arg(&data)
            .arg("-l")
            .arg(&log));
        Cluster {
            port,
            bin,
            dir,
            data,
            log,
            options,
        }
    }

    /// A new, empty database on this cluster, as a store URL.
    pub async fn fresh_database(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let port = self.port;
        let name = format!("bridge_{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let admin = format!("postgres://postgres@127.0.0.1:{port}/postgres");
        let mut conn = sqlx::PgConnection::connect(&admin)
            .await
            .unwrap_or_else(|e| panic!("connect to the test cluster: {e}{}", self.log_tail()));
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}{}", self.log_tail()));
        conn.close().await.ok();
        format!("postgres://postgres@127.0.0.1:{port}/{name}")
    }

    /// Restarts the cluster (a fast shutdown: every connection is cut, as in
    /// a failover), and returns once it accepts connections again.
    pub fn restart(&self) {
        run(as_server_user(Command::new(self.bin.join("pg_ctl")))
            .args([
                "restart",
                "-m",
                "fast",
                "-w",
                "-t",
                "60",
                "-o",
                &self.options,
                "-D",
            ])
            .arg(&self.data)
            // The server's output goes to its log: a pipe would keep `run` waiting.
            .arg("-l")
            .arg(&self.log));
    }

    /// The server log's last lines, for a failure message.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n");
        format!("\nlast lines of {}:\n{tail}", self.log.display())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = as_server_user(Command::new(self.bin.join("pg_ctl")))
            .args(["stop", "-m", "immediate", "-D"])
            .arg(&self.data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = as_server_user(Command::new("rm"))
            .arg("-rf")
            .arg(&self.dir)
            .status();
    }
}

/// The directory holding `initdb` and `pg_ctl`: on PATH, else the newest
/// /usr/lib/postgresql/*/bin (Debian keeps them off PATH).
fn server_binaries() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dirs| dirs.flatten().map(|d| d.path().join("bin")).collect())
        .unwrap_or_default();
    debian.sort_by_key(|p| version_of(p));
    debian.reverse();
    on_path
        .into_iter()
        .chain(debian)
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
        .unwrap_or_else(|| {
            panic!(
                "the PostgreSQL tests need initdb and pg_ctl (on PATH or in \
                 /usr/lib/postgresql/*/bin): install the Debian package `postgresql` \
                 (apt-get install -y postgresql)"
            )
        })
}

/// The major version in /usr/lib/postgresql/<version>/bin.
fn version_of(bin: &Path) -> u32 {
    bin.parent()
        .and_then(Path::file_name)
        .and_then(|v| v.to_str())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// PostgreSQL refuses to run as root: there, its commands run as `postgres`.
fn as_server_user(command: Command) -> Command {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if !root {
        return command;
    }
    let mut wrapped = Command::new("runuser");
    wrapped
        .args(["-u", "postgres", "--"])
        .arg(command.get_program())
        .args(command.get_args());
    wrapped
}

/// Runs `command` to completion; its trimmed stdout, or a panic with its stderr.
fn run(command: &mut Command) -> String {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A detached shell that waits for this process to end, then stops the
/// cluster and removes `dir`. Its own process group, so a Ctrl-C of the
/// test run does not stop it before it cleans up.
fn watch_until_exit(bin: &Path, dir: &Path) {
    let mut stop = as_server_user(Command::new(bin.join("pg_ctl")));
    stop.args(["stop", "-m", "immediate", "-D"])
        .arg(dir.join("data"));
    let stop_line = std::iter::once(stop.get_program())
        .chain(stop.get_args())
        .map(|a| format!("'{}'", a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ");
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; {stop_line} >/dev/null 2>&1; rm -rf '{dir}'",
        pid = std::process::id(),
        dir = dir.display()
    );
    // Never waited for: it outlives this process by design.
    #[allow(clippy::zombie_processes)]
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the cluster's watcher: {e}"));
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

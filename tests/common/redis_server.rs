//! A throwaway `redis-server` on a free loopback port, for tests of quotas
//! shared by replicas. It keeps nothing on disk and is killed when dropped.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::process::free_port;

/// A running `redis-server`.
pub struct RedisServer {
    pub port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts one and waits until it answers PING. Fails (never skips) when
    /// the binary is missing.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = spawn(port, dir.path());
        let mut server = Self {
            port,
            dir,
            child: Some(child),
        };
        server.wait_until_it_answers();
        server
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills it (SIGKILL, as a crash would) and waits until it is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops it answering (SIGSTOP, as a hung server): connections stay open.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused server answer again.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().unwrap().id().to_string();
        let status = Command::new("kill").args([signal, &pid]).status().unwrap();
        assert!(status.success(), "kill {signal} {pid} failed");
    }

    /// Starts it again on the same port, empty (nothing is saved).
    pub fn restart(&mut self) {
        self.kill();
        self.child = Some(spawn(self.port, self.dir.path()));
        self.wait_until_it_answers();
    }

    fn wait_until_it_answers(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if answers_ping(self.port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
        panic!(
            "redis-server on port {} did not answer PING within 10 s",
            self.port
        );
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn spawn(port: u16, dir: &Path) -> Child {
    let started = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn();
    match started {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "redis-server is not on PATH: install the Debian package `redis-server` \
             (apt-get install -y redis-server); the shared-quota tests need a real Redis"
        ),
        Err(e) => panic!("could not start redis-server: {e}"),
    }
}

fn answers_ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut reply = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}

/// A TCP relay in front of a Redis, for one replica's view of it: cutting it
/// drops that replica's connections and refuses new ones (a network
/// partition between that replica and Redis) while others still reach Redis.
pub struct Partition {
    pub url: String,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    relays: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Partition {
    /// A relay on a free loopback port to the Redis on `port`.
    pub async fn relay_to(port: u16) -> Self {
        use std::sync::atomic::Ordering;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("redis://{}", listener.local_addr().unwrap());
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let relays = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (cut_flag, relay_list) = (cut.clone(), relays.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if cut_flag.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is refused in effect
                }
                let relay = tokio::spawn(async move {
                    if let Ok(mut redis) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut redis).await;
                    }
                });
                relay_list.lock().unwrap().push(relay);
            }
        });
        Self {
            url,
            cut,
            relays,
            accept,
        }
    }

    /// Drops every relayed connection and refuses new ones.
    pub fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
        for relay in self.relays.lock().unwrap().drain(..) {
            relay.abort();
        }
    }

    /// Relays new connections again.
    pub fn heal(&self) {
        self.cut.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Partition {
    fn drop(&mut self) {
        self.accept.abort();
        for relay in self.relays.lock().unwrap().drain(..) {
            relay.abort();
        }
    }
}

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

//! HTTP/1.1 by hand over a loopback socket, for what a client library will not
//! send (two Host headers, an absolute-form target, a trickled head, a body
//! shorter than its Content-Length) or hides (whether the server closed the
//! connection, and when).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout};

/// One answer as read off the socket.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    /// Names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the server said it closes the connection after this answer.
    pub fn says_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {:?} {}",
                self.headers,
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

pub async fn connect(addr: SocketAddr) -> TcpStream {
    timeout(Duration::from_secs(5), TcpStream::connect(addr))
        .await
        .expect("connect timed out")
        .expect("connect")
}

/// Sends `request` (a whole HTTP/1.1 message, or the part of one to send now).
pub async fn send(stream: &mut TcpStream, request: &[u8]) {
    stream.write_all(request).await.expect("write");
}

/// A request with a JSON body and the headers an MCP client sends.
pub fn mcp_post(addr: SocketAddr, path: &str, token: Option<&str>, body: &str) -> Vec<u8> {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads one answer (a head, then a Content-Length or chunked body) within
/// `within`; `None` if the connection closed or failed before a whole head.
pub async fn read_response(stream: &mut TcpStream, within: Duration) -> Option<RawResponse> {
    timeout(within, read_one(stream))
        .await
        .unwrap_or_else(|_| panic!("no answer within {within:?}"))
}

async fn read_one(stream: &mut TcpStream) -> Option<RawResponse> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = buf[head_end..].to_vec();
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok());
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    if let Some(length) = length {
        while body.len() < length {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&chunk[..n]),
            }
        }
        body.truncate(length);
    } else if chunked {
        while !body.windows(5).any(|w| w == b"0\r\n\r\n") {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&chunk[..n]),
            }
        }
        body = dechunk(&body);
    }
    Some(RawResponse {
        status,
        headers,
        body,
    })
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&raw[..line_end]).trim(), 16)
            .unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = line_end + 2;
        out.extend_from_slice(&raw[start..(start + size).min(raw.len())]);
        raw = &raw[(start + size + 2).min(raw.len())..];
    }
    out
}

/// Waits up to `within` for the server to close the connection (EOF or
/// reset), discarding anything it sends first; returns how long that took,
/// or `None` if the connection was still open at the end.
pub async fn closed_within(stream: &mut TcpStream, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut chunk = [0u8; 4096];
    loop {
        let left = within.checked_sub(started.elapsed())?;
        match timeout(left, stream.read(&mut chunk)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

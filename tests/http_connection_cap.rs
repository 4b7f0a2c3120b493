//! Idle sockets cannot lock callers out. With the process's open-file limit
//! held at 1,536 (this test binary runs the bridge in-process and holds both
//! ends of every socket), 1,100 idle connections are opened for real and kept
//! open; `/healthz` still answers, a request over the cap is refused at once
//! with 503, `Connection: close` and `Retry-After`, and an MCP tool call is
//! served. Before the connection cap, every idle connection cost the bridge a
//! descriptor too, and the limit ran out before the 1,100 were open.
//!
//! One test in its own binary: the open-file limit is the whole process's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::raw::{self, read_response, send};
use rlimit::Resource;

const IDLE_SOCKETS: usize = 1_100;
const FD_LIMIT: u64 = 1_536;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sockets_do_not_lock_callers_out() {
    let (_, hard) = rlimit::getrlimit(Resource::NOFILE).unwrap();
    assert!(
        hard >= FD_LIMIT,
        "this test needs an open-file hard limit of at least {FD_LIMIT}, the machine has {hard}"
    );
    rlimit::setrlimit(Resource::NOFILE, FD_LIMIT, hard).unwrap();

    let server = r#"
max_connections = 50
overflow_connections = 8
overflow_grace = "300ms"
header_read_timeout = "20s"
"#;
    let bridge = common::with_config(&common::small_config(server, None)).await;

    // From the first idle socket on, the main lane is full until its sockets'
    // header time (20 s) runs out: the over-cap checks come well before.
    let opened = Instant::now();
    let mut idle = Vec::with_capacity(IDLE_SOCKETS);
    for i in 0..IDLE_SOCKETS {
        let stream = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::TcpStream::connect(bridge.addr),
        )
        .await
        .unwrap_or_else(|_| panic!("idle socket {i}: connect timed out"))
        .unwrap_or_else(|e| panic!("idle socket {i} could not be opened: {e}"));
        idle.push(stream);
    }

    // Over the cap: a tool call is refused at once, and told to come back.
    let mut refused = None;
    for _ in 0..20 {
        let mut stream = raw::connect(bridge.addr).await;
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        send(
            &mut stream,
            &raw::mcp_post(bridge.addr, "/mcp", Some("acme-token"), body),
        )
        .await;
        match read_response(&mut stream, Duration::from_secs(5)).await {
            Some(response) => {
                refused = Some(response);
                break;
            }
            // Both lanes full for a moment: closed at once; try again.
            None => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let refused = refused.expect("no answer over the cap");
    assert!(
        opened.elapsed() < Duration::from_secs(15),
        "the main lane freed up before the over-cap answer could be checked"
    );
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.says_close(), "{refused:?}");
    assert!(refused.header("retry-after").is_some(), "{refused:?}");

    // /healthz answers while the cap is reached.
    let mut healthy = false;
    for _ in 0..20 {
        let mut stream = raw::connect(bridge.addr).await;
        send(
            &mut stream,
            format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", bridge.addr).as_bytes(),
        )
        .await;
        if let Some(response) = read_response(&mut stream, Duration::from_secs(5)).await {
            assert_eq!(response.status, 200, "{response:?}");
            assert_eq!(response.body, b"ok");
            healthy = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(healthy, "/healthz did not answer with the cap reached");

    // A tool call is served once the idle connections in the cap have used
    // up their header time, while all 1,100 sockets are still open.
    let started = Instant::now();
    let served = loop {
        match tool_call(&bridge.url).await {
            Ok(result) => break result,
            Err(e) if started.elapsed() < Duration::from_secs(60) => {
                eprintln!("not served yet ({e}); trying again");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => panic!("no tool call was served in 60 s: {e}"),
        }
    };
    let listed = common::ok(&served);
    assert_eq!(listed["items"][0]["id"], "acme", "{listed}");
    assert_eq!(idle.len(), IDLE_SOCKETS);
    drop(idle);
}

/// `dealership.list` over a new MCP session, failing softly (503 over the cap).
async fn tool_call(url: &str) -> Result<rmcp::model::CallToolResult, String> {
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config =
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header("acme-token");
    let client =
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .map_err(|e| e.to_string())?;
    client
        .call_tool(rmcp::model::CallToolRequestParams::new("dealership.list"))
        .await
        .map_err(|e| e.to_string())
}

//! Protocol answers at the HTTP front door, over real sockets: JSON-RPC errors
//! for bodies that are not JSON-RPC, -32602 for ill-formed params, `Connection:
//! close` when an answer leaves the body unread, RFC 9112 Host rules, a strict
//! Origin check, and a rate-limited resource read that says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::raw::{self, RawResponse, closed_within, read_response, send};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

async fn bridge() -> common::Bridge {
    common::with_config(&common::small_config("", None)).await
}

/// POSTs `body` to the MCP endpoint on a fresh connection, with `extra` header lines.
async fn post_raw(bridge: &common::Bridge, body: &str, extra: &str) -> RawResponse {
    let mut stream = raw::connect(bridge.addr).await;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer acme-token\r\n\
         {extra}Content-Length: {}\r\n\r\n{body}",
        bridge.addr,
        body.len()
    );
    send(&mut stream, request.as_bytes()).await;
    read_response(&mut stream, WAIT).await.expect("an answer")
}

fn assert_jsonrpc_error(response: &RawResponse, status: u16, code: i64, id: Value) {
    assert_eq!(response.status, status, "{response:?}");
    assert!(
        response
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json")),
        "{response:?}"
    );
    let answer = response.json();
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
    assert!(answer["error"]["message"].is_string(), "{answer}");
}

#[tokio::test]
async fn bodies_that_are_not_json_rpc_get_json_rpc_errors() {
    let bridge = bridge().await;
    for malformed in [
        "{",
        "",
        "not json",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dealership.list","arguments":{"x":NaN}}}"#,
        r#"{"jsonrpc":"2.0","id":1} trailing"#,
    ] {
        let response = post_raw(&bridge, malformed, "").await;
        assert_jsonrpc_error(&response, 400, -32700, Value::Null);
    }
    for not_jsonrpc in [
        r#"{"hello":"world"}"#,
        "[]",
        "42",
        r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":{"no":"objects"},"method":"tools/list"}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
    ] {
        let response = post_raw(&bridge, not_jsonrpc, "").await;
        assert_jsonrpc_error(&response, 400, -32600, Value::Null);
    }
}

#[tokio::test]
async fn tools_call_with_bad_params_is_invalid_params_with_its_id() {
    let bridge = bridge().await;
    for (id, params) in [
        (json!(7), None),
        (json!("req-8"), Some(json!({ "arguments": {} }))),
        (json!(9), Some(json!({ "name": 5 }))),
        (json!(10), Some(json!("dealership.list"))),
        (
            json!(11),
            Some(json!({ "name": "dealership.list", "arguments": [1, 2] })),
        ),
    ] {
        let mut request = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call" });
        if let Some(params) = params {
            request["params"] = params;
        }
        let response = post_raw(&bridge, &request.to_string(), "").await;
        assert_jsonrpc_error(&response, 200, -32602, id);
    }
    // A method nobody knows is still Method not found.
    let response = post_raw(
        &bridge,
        r#"{"jsonrpc":"2.0","id":12,"method":"vendor/unknown","params":{}}"#,
        "",
    )
    .await;
    assert_eq!(response.json()["error"]["code"], -32601, "{response:?}");
    // And a good call still works.
    let response = post_raw(
        &bridge,
        r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"dealership.list","arguments":{}}}"#,
        "",
    )
    .await;
    assert_eq!(response.status, 200);
    assert_eq!(response.json()["result"]["isError"], false, "{response:?}");
}

/// An answer given before the body is read: the connection must either say
/// `Connection: close` or carry the next request, as a pooled client (httpx,
/// reqwest) assumes. The head goes first and the body only after the answer,
/// as a client streaming a larger body would see it.
async fn early_answer_keeps_its_word(
    bridge: &common::Bridge,
    head_lines: &str,
    expected_status: u16,
) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"pad":"{}"}}}}"#,
        "x".repeat(64 * 1024)
    );
    let mut stream = raw::connect(bridge.addr).await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\n{head_lines}Content-Length: {}\r\n\r\n",
        bridge.addr,
        body.len()
    );
    send(&mut stream, head.as_bytes()).await;
    let first = read_response(&mut stream, WAIT).await.expect("an answer");
    assert_eq!(first.status, expected_status, "{first:?}");
    if first.says_close() {
        assert!(
            closed_within(&mut stream, WAIT).await.is_some(),
            "said close, kept the connection"
        );
        return;
    }
    // Kept alive: the body, then the next request on the same connection.
    let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, body.as_bytes()).await;
    let next = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", bridge.addr);
    let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, next.as_bytes()).await;
    let second = tokio::time::timeout(WAIT, async { raw::read_response(&mut stream, WAIT).await })
        .await
        .ok()
        .flatten();
    assert!(
        second.is_some_and(|r| r.status == 200),
        "{expected_status} without Connection: close, then the kept-alive connection failed the next request"
    );
}

#[tokio::test]
async fn early_refusals_say_connection_close() {
    let bridge = bridge().await;
    let json = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    // 401: a token the bridge does not know.
    early_answer_keeps_its_word(
        &bridge,
        &format!("{json}Authorization: Bearer not-a-token\r\n"),
        401,
    )
    .await;
    // 406: Accept without event streams.
    early_answer_keeps_its_word(
        &bridge,
        "Content-Type: application/json\r\nAccept: application/json\r\nAuthorization: Bearer acme-token\r\n",
        406,
    )
    .await;
    // 415: not JSON.
    early_answer_keeps_its_word(
        &bridge,
        "Content-Type: text/plain\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer acme-token\r\n",
        415,
    )
    .await;
    // 403: a foreign Origin.
    early_answer_keeps_its_word(
        &bridge,
        &format!("{json}Authorization: Bearer acme-token\r\nOrigin: https://evil.example\r\n"),
        403,
    )
    .await;
    // 413: over max_request_bytes (1 MiB by default).
    let mut stream = raw::connect(bridge.addr).await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\n{json}Authorization: Bearer acme-token\r\nContent-Length: 2000000\r\n\r\n",
        bridge.addr
    );
    send(&mut stream, head.as_bytes()).await;
    let response = read_response(&mut stream, WAIT).await.expect("an answer");
    assert_eq!(response.status, 413, "{response:?}");
    assert!(response.says_close(), "{response:?}");
}

#[tokio::test]
async fn a_pooled_client_survives_an_early_refusal() {
    // reqwest keeps connections alive and reuses them, as httpx does.
    let bridge = bridge().await;
    let client = dms_bridge::net::client_builder()
        .pool_max_idle_per_host(1)
        .build()
        .unwrap();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { "pad": "x".repeat(256 * 1024) } });
    for round in 0..3 {
        let refused = client
            .post(&bridge.url)
            .header("Authorization", "Bearer not-a-token")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(refused.status(), 401);
        let served = client
            .post(&bridge.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("Authorization", "Bearer acme-token")
            .json(&body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("round {round}, after the 401: {e}"));
        assert_eq!(served.status(), 200);
    }
}

#[tokio::test]
async fn two_host_headers_are_refused() {
    let bridge = bridge().await;
    for path in ["/healthz", "/mcp"] {
        let mut stream = raw::connect(bridge.addr).await;
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nHost: evil.example\r\n\r\n",
            bridge.addr
        );
        send(&mut stream, request.as_bytes()).await;
        let response = read_response(&mut stream, WAIT).await.expect("an answer");
        assert_eq!(response.status, 400, "{path}: {response:?}");
    }
}

#[tokio::test]
async fn an_absolute_form_target_for_another_host_is_refused() {
    let bridge = bridge().await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    for target in [
        "http://evil.example/mcp".to_owned(),
        format!("http://evil.example:{}/mcp", bridge.addr.port()),
    ] {
        let mut stream = raw::connect(bridge.addr).await;
        let request =
            String::from_utf8(raw::mcp_post(bridge.addr, "/mcp", Some("acme-token"), body))
                .unwrap()
                .replacen("POST /mcp ", &format!("POST {target} "), 1);
        send(&mut stream, request.as_bytes()).await;
        let response = read_response(&mut stream, WAIT).await.expect("an answer");
        assert_eq!(response.status, 400, "{target}: {response:?}");
    }
    // The same authority as Host, in absolute form, is served.
    let mut stream = raw::connect(bridge.addr).await;
    let request = String::from_utf8(raw::mcp_post(bridge.addr, "/mcp", Some("acme-token"), body))
        .unwrap()
        .replacen(
            "POST /mcp ",
            &format!("POST http://{}/mcp ", bridge.addr),
            1,
        );
    send(&mut stream, request.as_bytes()).await;
    let response = read_response(&mut stream, WAIT).await.expect("an answer");
    assert_eq!(response.status, 200, "{response:?}");
}

#[tokio::test]
async fn origins_and_hosts_are_parsed_strictly() {
    let bridge = bridge().await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let port = bridge.addr.port();
    for (origin, status) in [
        (format!("http://127.0.0.1:{port}"), 200),
        (format!("http://localhost:{port}"), 200),
        (format!("http://127.0.0.1:{port}.evil.example"), 403),
        (format!("http://127.0.0.1.evil.example:{port}"), 403),
        (format!("http://127.0.0.1:{port}@evil.example"), 403),
        ("http://127.0.0.1:99999".to_owned(), 403),
        (format!("https://evil.example:{port}"), 403),
    ] {
        let response = post_raw(&bridge, body, &format!("Origin: {origin}\r\n")).await;
        assert_eq!(response.status, status, "Origin {origin}: {response:?}");
    }
    // Host gets the same reading: a port that is not a number is no port.
    let mut stream = raw::connect(bridge.addr).await;
    let request = String::from_utf8(raw::mcp_post(bridge.addr, "/mcp", Some("acme-token"), body))
        .unwrap()
        .replacen(
            &format!("Host: {}", bridge.addr),
            &format!("Host: 127.0.0.1:{port}.evil.example"),
            1,
        );
    send(&mut stream, request.as_bytes()).await;
    let response = read_response(&mut stream, WAIT).await.expect("an answer");
    assert!(
        matches!(response.status, 400 | 403),
        "Host 127.0.0.1:{port}.evil.example: {response:?}"
    );
}

#[tokio::test]
async fn a_rate_limited_resource_read_says_so() {
    let quota = Some(r#"{ requests = 1, per = "1h", burst = 1 }"#);
    let bridge = common::with_config(&common::small_config("", quota)).await;
    let read = json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": { "uri": "dms://dealerships/acme" } });
    let anonymous = |body: String| {
        let bridge = &bridge;
        async move {
            let mut stream = raw::connect(bridge.addr).await;
            send(
                &mut stream,
                &raw::mcp_post(bridge.addr, "/mcp", None, &body),
            )
            .await;
            read_response(&mut stream, WAIT).await.expect("an answer")
        }
    };
    let first = anonymous(read.to_string()).await;
    assert_eq!(first.status, 200);
    assert!(first.json()["result"]["contents"].is_array(), "{first:?}");
    let second = anonymous(read.to_string()).await.json();
    let error = &second["error"];
    assert_eq!(error["code"], -32002, "{second}");
    assert_eq!(error["data"]["aap_code"], "RATE_LIMITED", "{second}");
    let wait = error["data"]["retry_after_ms"]
        .as_u64()
        .expect("retry_after_ms");
    assert!(wait > 0, "{second}");
    assert_eq!(error["data"]["error"]["code"], "rate_limited", "{second}");
    assert_eq!(error["data"]["error"]["retryable"], true, "{second}");
}

/// Two `Authorization` headers are refused rather than one of them guessed
/// (an outside audit saw the first used).
#[tokio::test]
async fn two_authorization_headers_are_a_bad_request() {
    let bridge = bridge().await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let response = post_raw(&bridge, body, "Authorization: Bearer other-token\r\n").await;
    assert_eq!(response.status, 400, "{response:?}");
}

/// A head too large for the server gets its 431 rather than a reset: the
/// rest of it is read and dropped before the connection closes (an outside
/// audit's 1 MB `Authorization` header got a reset). The client here writes
/// its whole request before it reads, as most do, in pieces.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_megabyte_authorization_header_gets_431_not_a_reset() {
    let bridge = bridge().await;
    let mut stream = raw::connect(bridge.addr).await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Length: 2\r\n\r\n{{}}",
        bridge.addr,
        "a".repeat(1 << 20)
    );
    // Sent as a network delivers it, in pieces: the server has answered and
    // would have closed long before the last piece.
    let send_all = async {
        for piece in head.as_bytes().chunks(128 * 1024) {
            tokio::io::AsyncWriteExt::write_all(&mut stream, piece).await?;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok::<_, std::io::Error>(())
    };
    let written = tokio::time::timeout(WAIT, send_all)
        .await
        .expect("the write ended within the wait");
    assert!(
        written.is_ok(),
        "the request could not be sent: {written:?}"
    );
    let mut answer = Vec::new();
    let read = tokio::time::timeout(
        WAIT,
        tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut answer),
    )
    .await
    .expect("the connection was closed within the wait");
    let text = String::from_utf8_lossy(&answer);
    assert!(
        read.is_ok(),
        "the connection was reset: {read:?} after {text:?}"
    );
    assert!(text.starts_with("HTTP/1.1 431"), "{text:?}");
}

/// The DNS-rebinding guard covers every route: a page on the operator's
/// network that reaches the bridge under a name of its own reads nothing off
/// `/metrics` or `/readyz` (an outside audit read dealership, upstream and
/// webhook names). An IP literal, as a probe or scraper uses, is no rebinding.
#[tokio::test]
async fn operator_routes_answer_only_allowed_hosts_and_ip_literals() {
    let bridge = bridge().await;
    for path in ["/metrics", "/readyz", "/healthz"] {
        for (host, status) in [
            ("rebound.attacker.example".to_owned(), 403),
            (
                format!("rebound.attacker.example:{}", bridge.addr.port()),
                403,
            ),
            (bridge.addr.to_string(), 200),
            (format!("localhost:{}", bridge.addr.port()), 200),
            (format!("10.1.2.3:{}", bridge.addr.port()), 200),
        ] {
            let mut stream = raw::connect(bridge.addr).await;
            send(
                &mut stream,
                format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(),
            )
            .await;
            let response = read_response(&mut stream, WAIT).await.expect("an answer");
            assert_eq!(
                response.status, status,
                "{path} for Host {host}: {response:?}"
            );
        }
    }
}

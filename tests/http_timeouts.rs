//! The HTTP server's timeouts, over real sockets against the production accept
//! loop: a head that trickles in is cut by `header_read_timeout`, a body that
//! does not arrive gets 408 by `body_read_timeout` (and a declared 10 GiB body
//! is refused at once), and a kept-alive connection left idle is closed after
//! `idle_timeout`. Short timeouts keep the tests to seconds; the bounds
//! asserted are generous, they only say "closed", not "how fast".
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::raw::{self, closed_within, read_response, send};
use tokio::io::AsyncWriteExt;

const SERVER: &str = r#"
header_read_timeout = "1s"
body_read_timeout = "1s"
idle_timeout = "1s"
"#;

async fn bridge() -> common::Bridge {
    common::with_config(&common::small_config(SERVER, None)).await
}

#[tokio::test]
async fn a_trickled_head_is_cut_by_the_header_timeout() {
    let bridge = bridge().await;
    let mut stream = raw::connect(bridge.addr).await;
    let head = format!(
        "GET /healthz HTTP/1.1\r\nHost: {}\r\nX-Padding: {}\r\n\r\n",
        bridge.addr,
        "a".repeat(200)
    );
    // One byte every 100 ms: the head would take 25 s to arrive.
    let mut cut_after = None;
    for (i, byte) in head.as_bytes().iter().enumerate() {
        if stream.write_all(&[*byte]).await.is_err() {
            cut_after = Some(i);
            break;
        }
        if closed_within(&mut stream, Duration::from_millis(100))
            .await
            .is_some()
        {
            cut_after = Some(i);
            break;
        }
        assert!(i < 60, "the trickled head was still being read after 6 s");
    }
    let cut_after = cut_after.expect("the connection was never closed");
    assert!(cut_after < head.len(), "the whole head got through");
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed() {
    let bridge = bridge().await;
    let mut stream = raw::connect(bridge.addr).await;
    assert!(
        closed_within(&mut stream, Duration::from_secs(6))
            .await
            .is_some(),
        "a silent connection was kept open"
    );
}

#[tokio::test]
async fn a_body_that_does_not_arrive_gets_408_and_the_connection_closes() {
    let bridge = bridge().await;
    let mut stream = raw::connect(bridge.addr).await;
    // 1,000 bytes declared, 100 sent.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer acme-token\r\n\
         Content-Length: 1000\r\n\r\n",
        bridge.addr
    );
    send(&mut stream, head.as_bytes()).await;
    send(&mut stream, &[b' '; 100]).await;
    let response = read_response(&mut stream, Duration::from_secs(6))
        .await
        .expect("an answer");
    assert_eq!(response.status, 408, "{response:?}");
    assert!(response.says_close(), "{response:?}");
    assert!(
        closed_within(&mut stream, Duration::from_secs(5))
            .await
            .is_some(),
        "the connection stayed open after 408"
    );
}

#[tokio::test]
async fn a_ten_gib_body_with_a_hundred_bytes_is_answered_and_closed() {
    let bridge = bridge().await;
    let mut stream = raw::connect(bridge.addr).await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer acme-token\r\n\
         Content-Length: {}\r\n\r\n",
        bridge.addr,
        10u64 << 30
    );
    send(&mut stream, head.as_bytes()).await;
    send(&mut stream, &[b'{'; 100]).await;
    let response = read_response(&mut stream, Duration::from_secs(6))
        .await
        .expect("an answer");
    assert_eq!(response.status, 413, "{response:?}");
    assert!(response.says_close(), "{response:?}");
    assert_eq!(response.json()["error"]["code"], -32600);
    assert!(
        closed_within(&mut stream, Duration::from_secs(5))
            .await
            .is_some(),
        "the connection stayed open after 413"
    );
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let bridge = bridge().await;
    let mut stream = raw::connect(bridge.addr).await;
    let get = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", bridge.addr);
    // Two requests on one connection: it is kept alive between them.
    for _ in 0..2 {
        send(&mut stream, get.as_bytes()).await;
        let response = read_response(&mut stream, Duration::from_secs(5))
            .await
            .expect("an answer");
        assert_eq!(response.status, 200);
        assert!(!response.says_close(), "{response:?}");
    }
    assert!(
        closed_within(&mut stream, Duration::from_secs(6))
            .await
            .is_some(),
        "an idle kept-alive connection was kept open"
    );
}

#[tokio::test]
async fn a_long_call_is_not_cut_by_the_idle_or_header_timeout() {
    // The watchdog only counts time with nothing in flight: a request whose
    // answer takes longer than every timeout still gets it.
    let upstream = wiremock::MockServer::start().await;
    common::mount_token(&upstream).await;
    wiremock::Mock::given(wiremock::matchers::path(common::INVENTORY_PATH))
        .respond_with(common::inventory_ok().set_delay(Duration::from_millis(1600)))
        .mount(&upstream)
        .await;
    // Only the server's timeouts are under test: the upstream's and the call's
    // leave the slow answer all the room a slow machine needs.
    let toml = common::rest(&upstream.uri())
        .section("server", SERVER)
        .call_timeout("60s")
        .edit_upstream("cdk", |cdk| cdk.timeout("30s"))
        .render();
    let bridge = common::with_config(&toml).await;
    let client = common::connect(&bridge.url, Some("acme-token")).await;
    let result = common::call(
        &client,
        "inventory.search",
        serde_json::json!({ "dealership_id": "acme", "limit": 1 }),
    )
    .await;
    common::ok(&result);
}

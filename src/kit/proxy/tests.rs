use std::sync::Mutex;

use super::*;
use wiremock::matchers::{body_string, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A tap that answers with a fixed verdict and keeps every exchange.
struct Fixed(Verdict, Mutex<Vec<Exchange>>);

impl Tap for Fixed {
    fn before(&self, _: &ProxyRequest) -> Verdict {
        self.0.clone()
    }
    fn after(&self, exchange: &Exchange) {
        self.1.lock().unwrap().push(exchange.clone());
    }
}

async fn proxied(verdict: Verdict) -> (MockServer, Proxy, Arc<Fixed>, CancellationToken) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/items"))
        .and(query_param("page", "2"))
        .and(header("x-vendor", "v"))
        .and(body_string("hello"))
        .respond_with(
            ResponseTemplate::new(201)
                .insert_header("x-ratelimit-remaining", "9")
                .set_body_raw("{\"ok\":true}", "application/json"),
        )
        .mount(&server)
        .await;
    let tap = Arc::new(Fixed(verdict, Mutex::new(Vec::new())));
    let cancel = CancellationToken::new();
    let proxy = start(
        "127.0.0.1:0".parse().unwrap(),
        &server.uri(),
        tap.clone(),
        cancel.clone(),
    )
    .await
    .unwrap();
    (server, proxy, tap, cancel)
}

async fn post(proxy: &Proxy) -> reqwest::Result<reqwest::Response> {
    crate::net::client_builder()
        .build()
        .unwrap()
        .post(format!("http://{}/api/items?page=2", proxy.addr))
        .header("x-vendor", "v")
        .body("hello")
        .send()
        .await
}

#[tokio::test]
async fn forwards_everything_and_shows_the_tap_the_exchange() {
    let (server, proxy, tap, _cancel) = proxied(Verdict::Forward).await;
    let answer = post(&proxy).await.unwrap();
    assert_eq!(answer.status(), 201);
    assert_eq!(answer.headers()["x-ratelimit-remaining"], "9");
    assert_eq!(answer.text().await.unwrap(), "{\"ok\":true}");
    let seen = tap.1.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].request.path, "/api/items");
    assert_eq!(seen[0].request.query.as_deref(), Some("page=2"));
    assert_eq!(seen[0].request.body, "hello");
    assert_eq!(seen[0].response.status, 201);
    assert!(!seen[0].substituted);
    let host = server.received_requests().await.unwrap()[0].headers["host"].clone();
    assert_eq!(
        host,
        server.address().to_string(),
        "Host is the origin's, not the proxy's"
    );
}

#[tokio::test]
async fn a_tap_may_answer_reset_or_truncate() {
    let substitute = ProxyResponse {
        status: StatusCode::SERVICE_UNAVAILABLE,
        headers: HeaderMap::new(),
        body: Bytes::from_static(b"down"),
    };
    let (server, proxy, tap, _c) = proxied(Verdict::Answer(substitute)).await;
    let answer = post(&proxy).await.unwrap();
    assert_eq!(
        (answer.status().as_u16(), answer.text().await.unwrap()),
        (503, "down".to_owned())
    );
    assert!(tap.1.lock().unwrap()[0].substituted);
    assert!(server.received_requests().await.unwrap().is_empty());

    let (_s, proxy, _t, _c) = proxied(Verdict::Reset).await;
    assert!(post(&proxy).await.is_err(), "no answer at all");

    let (_s, proxy, _t, _c) = proxied(Verdict::Truncate(4)).await;
    let answer = post(&proxy).await.unwrap();
    assert_eq!(answer.status(), 201);
    assert!(answer.bytes().await.is_err(), "the body stops short");
}

#[tokio::test]
async fn an_unreachable_origin_is_a_502_and_observed() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let observe = Arc::new(Observe::default());
    let proxy = start(
        "127.0.0.1:0".parse().unwrap(),
        &format!("http://{dead}"),
        observe.clone(),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let answer = post(&proxy).await.unwrap();
    assert_eq!(answer.status(), 502);
    assert_eq!(observe.seen()[0].status, None);
    assert!(
        start(
            "127.0.0.1:0".parse().unwrap(),
            "ftp://x",
            observe,
            CancellationToken::new()
        )
        .await
        .is_err()
    );
}

#[tokio::test]
async fn observe_keeps_timings_and_quota_headers() {
    let (server, _p, _t, _c) = proxied(Verdict::Forward).await;
    let observe = Arc::new(Observe::default());
    let proxy = start(
        "127.0.0.1:0".parse().unwrap(),
        &server.uri(),
        observe.clone(),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    post(&proxy).await.unwrap();
    let seen = observe.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (
            seen[0].method.as_str(),
            seen[0].path.as_str(),
            seen[0].status
        ),
        ("POST", "/api/items", Some(201))
    );
    assert_eq!(
        seen[0].rate_limit,
        [("x-ratelimit-remaining".to_owned(), "9".to_owned())]
    );
    assert!(is_rate_limit_header("RateLimit-Reset") && is_rate_limit_header("Retry-After"));
    assert!(!is_rate_limit_header("content-type"));
}

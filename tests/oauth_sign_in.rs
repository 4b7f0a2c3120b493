//! OAuth 2.1 sign-in against the running bridge: rmcp's own OAuth client goes
//! through discovery (401 → protected resource metadata → the authorization
//! server's metadata), registration, the code flow with PKCE, and calls
//! tools with the token; forged, expired, misaddressed and downgraded tokens
//! get 401 with nothing else; a missing scope gets 403 naming it. The
//! authorization server is the test-kit's demo server, on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use dms_bridge_testkit::oauth::DemoAuthServer;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthorizationRequest, OAuthState};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

/// A raw POST to the MCP endpoint with `token`; the status, `WWW-Authenticate` and body.
async fn post(url: &str, token: Option<&str>, body: &str) -> (u16, String, String) {
    let mut request = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_owned());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    let challenge = answer
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, challenge, answer.text().await.unwrap())
}

fn call_body(tool: &str, args: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": tool, "arguments": args } })
    .to_string()
}

#[tokio::test]
async fn rmcps_oauth_client_signs_in_and_calls_tools() {
    let (bridge, _auth) = demo_signed_in("").await;
    // The host's first request: no token, so the bridge says where to sign in.
    let (status, challenge, _) = post(&bridge.url, None, TOOLS_LIST).await;
    assert_eq!(status, 401);
    let metadata_url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        bridge.addr
    );
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );

    dms_bridge::net::install_tls_provider();
    let mut state = OAuthState::new(bridge.url.as_str(), None).await.unwrap();
    let mut request = AuthorizationRequest::new("http://127.0.0.1:45199/callback")
        .with_scopes(["amcp:inventory:read", "amcp:leads:read", "amcp:leads:write"])
        .with_client_name("dms-bridge sign-in test");
    request.challenge = Some(challenge);
    state.start_authorization(request).await.unwrap();
    let url = state.get_authorization_url().await.unwrap();
    // The browser's part: the demo server consents at once and redirects back.
    let browser = dms_bridge::net::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let consent = browser.get(&url).send().await.unwrap();
    assert_eq!(consent.status(), 302);
    let callback = consent.headers()["location"].to_str().unwrap().to_owned();
    state.handle_callback_url(&callback).await.unwrap();
    let manager = state.into_authorization_manager().unwrap();

    let transport = StreamableHttpClientTransport::with_client(
        AuthClient::new(dms_bridge::net::client_builder().build().unwrap(), manager),
        StreamableHttpClientTransportConfig::with_uri(bridge.url.clone()),
    );
    let client = ().serve(transport).await.expect("initialize with the token");
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    // The token's scopes, not the user's most: no service or deals tools.
    assert!(names.contains(&"inventory_search".to_owned()), "{names:?}");
    assert!(names.contains(&"leads_create".to_owned()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("service_")),
        "{names:?}"
    );
    let dealerships = ok(&call(&client, "dealership_list", json!({})).await);
    assert_eq!(dealerships["items"].as_array().unwrap().len(), 6);
    let page = ok(&call(
        &client,
        "inventory_search",
        json!({ "dealership_id": "demo-cdk", "limit": 2 }),
    )
    .await);
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn protected_resource_metadata_names_the_resource_and_the_server() {
    let (bridge, auth) = demo_signed_in("").await;
    // RFC 9728 §3.3: a client must refuse metadata whose resource is not the
    // one it derived the path from; the root path is not `/mcp`'s.
    let root = common::http_get(format!(
        "http://{}/.well-known/oauth-protected-resource",
        bridge.addr
    ))
    .await
    .unwrap();
    assert_eq!(root.status(), 404);
    for path in ["/.well-known/oauth-protected-resource/mcp"] {
        let metadata: Value = common::http_get(format!("http://{}{path}", bridge.addr))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(metadata["resource"], bridge.url, "{path}");
        assert_eq!(metadata["authorization_servers"], json!([auth.issuer()]));
        let scopes = metadata["scopes_supported"].as_array().unwrap();
        assert!(scopes.contains(&json!("amcp:leads:write")), "{scopes:?}");
        assert!(!scopes.contains(&json!("offline_access")));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }
    // A bad token: the same pointer, and the reason class.
    let (status, challenge, body) = post(&bridge.url, Some("not-a-token"), TOOLS_LIST).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(
        challenge.contains("scope=\"amcp:inventory:read "),
        "{challenge}"
    );
    assert!(body.contains("auth.unauthorized"), "{body}");
}

/// `token` with its header replaced by `header` (the signature kept).
fn with_header(token: &str, header: Value) -> String {
    let rest = token.split_once('.').unwrap().1;
    format!("{}.{rest}", URL_SAFE_NO_PAD.encode(header.to_string()))
}

/// `token` with its payload replaced by `claims` (the signature kept).
fn with_payload(token: &str, claims: &Value) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{}.{payload}.{}", parts[0], parts[2])
}

/// The demo server's public key as an HMAC secret: the key-confusion forgery.
async fn hs256_with_public_key(auth: &DemoAuthServer, claims: &Value) -> String {
    let jwks: Value = common::http_get(auth.jwks_uri())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let public = jwks["keys"][0].to_string();
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = Some(auth.kid().to_owned());
    jsonwebtoken::encode(
        &header,
        claims,
        &jsonwebtoken::EncodingKey::from_secret(public.as_bytes()),
    )
    .unwrap()
}

#[tokio::test]
async fn forged_expired_and_misaddressed_tokens_get_401_and_nothing_else() {
    let (bridge, auth) = demo_signed_in("").await;
    let good = auth.claims("demo-group").unwrap();
    let valid = auth.mint(&good).unwrap();
    let (status, _, _) = post(&bridge.url, Some(&valid), TOOLS_LIST).await;
    assert_eq!(
        status, 200,
        "the valid token must pass for the rest to mean anything"
    );

    let now = good.iat;
    let mut expired = good.clone();
    (expired.iat, expired.nbf, expired.exp) = (now - 7200, now - 7200, now - 3600);
    let mut early = good.clone();
    (early.nbf, early.exp) = (now + 3600, now + 7200);
    let mut other_audience = good.clone();
    other_audience.aud = "http://127.0.0.1:1/mcp".into();
    let mut other_issuer = good.clone();
    other_issuer.iss = "http://127.0.0.1:1".into();
    let claims = serde_json::to_value(&good).unwrap();
    let mut widened = claims.clone();
    widened["amcp_dealerships"] = json!(["*"]);
    let cases = [
        ("expired", auth.mint(&expired).unwrap()),
        ("not yet valid", auth.mint(&early).unwrap()),
        ("another audience", auth.mint(&other_audience).unwrap()),
        ("another issuer", auth.mint(&other_issuer).unwrap()),
        ("tampered payload", with_payload(&valid, &widened)),
        (
            "signed by an unpublished key",
            auth.mint_with_foreign_key(&good).unwrap(),
        ),
        (
            "unknown kid",
            with_header(
                &valid,
                json!({ "alg": "ES256", "typ": "JWT", "kid": "rotated-away" }),
            ),
        ),
        (
            "alg none",
            format!(
                "{}.{}.",
                URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#),
                URL_SAFE_NO_PAD.encode(claims.to_string())
            ),
        ),
        (
            "HS256 keyed with the public key",
            hs256_with_public_key(&auth, &claims).await,
        ),
    ];
    for (what, token) in cases {
        for body in [
            TOOLS_LIST.to_owned(),
            call_body("dealership_list", json!({})),
        ] {
            let (status, challenge, answer) = post(&bridge.url, Some(&token), &body).await;
            assert_eq!(status, 401, "{what}: {answer}");
            assert!(challenge.contains("invalid_token"), "{what}: {challenge}");
            assert!(
                !answer.contains("demo-cdk") && !answer.contains("tools"),
                "{what}: {answer}"
            );
        }
    }
    // Claude Code adds a trailing slash to the resource; that is the same audience.
    let mut slashed = good.clone();
    slashed.aud = format!("{}/", bridge.url);
    let (status, _, _) = post(&bridge.url, Some(&auth.mint(&slashed).unwrap()), TOOLS_LIST).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_missing_scope_is_a_403_naming_it_and_static_tokens_answer_in_band() {
    let (bridge, auth) = demo_signed_in("").await;
    let mut claims = auth.claims("demo-cdk").unwrap();
    claims.scope = "amcp:inventory:read".into();
    let token = auth.mint(&claims).unwrap();
    let lead = call_body("leads_create", common::leads::lead("demo-cdk", 1));
    let (status, challenge, body) = post(&bridge.url, Some(&token), &lead).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"amcp:leads:write\""),
        "{challenge}"
    );
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
    assert!(body.contains("amcp:leads:write"), "{body}");
    // Its own scope still works, by either name of the tool.
    for name in ["inventory_search", "inventory.search"] {
        let search = call_body(name, json!({ "dealership_id": "demo-cdk", "limit": 1 }));
        let (status, _, body) = post(&bridge.url, Some(&token), &search).await;
        assert_eq!(status, 200, "{name}: {body}");
        assert!(body.contains("\"items\""), "{name}: {body}");
    }
    // A static token without the scope gets the tool error, as before.
    let limited = "inventory-only-token";
    let (bridge, _auth) = demo_signed_in(&format!(
        "\n[[tokens]]\nname = \"inventory-only\"\nsecret = {{ value = \"{limited}\" }}\n\
         dealerships = [\"demo-cdk\"]\nscopes = [\"amcp:inventory:read\"]\n"
    ))
    .await;
    let (status, _, body) = post(&bridge.url, Some(limited), &lead).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("auth.forbidden"), "{body}");
}

#[tokio::test]
async fn an_unreachable_key_server_fails_closed_in_bounded_time_and_static_tokens_still_work() {
    // Keys at an address nothing answers fast: a listener that never replies.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let jwks = format!("http://{}/jwks", silent.local_addr().unwrap());
    let (bridge, auth) =
        demo_signed_in(&format!("jwks_uri = \"{jwks}\"\njwks_timeout = \"5s\"\n")).await;
    let token = auth.mint(&auth.claims("demo-group").unwrap()).unwrap();
    let url = bridge.url.clone();
    let signed_in = tokio::spawn(async move {
        let started = Instant::now();
        let (status, _, _) = post(&url, Some(&token), TOOLS_LIST).await;
        (status, started.elapsed())
    });
    // Meanwhile a static token is served without waiting on the key server.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, _, _) = post(&bridge.url, Some("demo-token-group"), TOOLS_LIST).await;
    assert_eq!(status, 200);
    assert!(
        !signed_in.is_finished(),
        "the static token's call should not have waited for the key server"
    );
    let (status, took) = signed_in.await.unwrap();
    assert_eq!(status, 401);
    // A generous bound: the point is that it ends (jwks_timeout is 5 s), not how fast.
    assert!(took < Duration::from_secs(30), "{took:?}");
    drop(silent);
}

/// A body the bridge refuses anyway is never read, for a signed-in caller as
/// for any other (an outside audit saw a signed-in caller's 256 MB text/plain
/// body read whole into memory before the refusal): with 64 MB declared and
/// 1 KB sent, the refusal comes at once, as it does for a static token.
#[tokio::test]
async fn a_refused_body_is_never_read_whoever_sends_it() {
    let (bridge, auth) = demo_signed_in("").await;
    let signed_in = auth.mint(&auth.claims("demo-group").unwrap()).unwrap();
    let refused = [
        // Not JSON: 415.
        ("text/plain", "application/json, text/event-stream", 415),
        // JSON, but not accepting the event stream too: 406.
        ("application/json", "application/json", 406),
    ];
    for token in [signed_in.as_str(), "demo-token-group"] {
        for (content_type, accept, status) in refused {
            let mut stream = raw::connect(bridge.addr).await;
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
                 Content-Type: {content_type}\r\nAccept: {accept}\r\nContent-Length: {}\r\n\r\n",
                bridge.addr,
                64u64 << 20
            );
            raw::send(&mut stream, head.as_bytes()).await;
            raw::send(&mut stream, &[b'x'; 1024]).await;
            // Well within body_read_timeout (30 s): nothing waits for the body.
            let response = raw::read_response(&mut stream, Duration::from_secs(10))
                .await
                .unwrap_or_else(|| panic!("{content_type}, {accept}: closed without an answer"));
            assert_eq!(
                response.status, status,
                "{content_type}, {accept}: {response:?}"
            );
            assert!(response.says_close(), "{response:?}");
        }
    }
}

/// A token naming a key the bridge has not seen, signed by no one: anyone can make one.
fn junk_token(n: usize) -> String {
    let header = json!({ "alg": "ES256", "typ": "JWT", "kid": format!("junk-{n}") });
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(r#"{"sub":"x"}"#),
        URL_SAFE_NO_PAD.encode([7u8; 64])
    )
}

/// While the issuer's key endpoint hangs, tokens naming unknown keys share
/// one fetch and then are refused at once until the refresh interval is up
/// (an outside audit saw four such tokens queue for 5, 10, 15 and 20 s, each
/// holding a connection, each making a fetch of its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junk_tokens_during_an_issuer_outage_share_one_fetch_and_then_wait_for_none() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let jwks = format!("http://{}/jwks", silent.local_addr().unwrap());
    let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = connections.clone();
    // Accepts and holds every connection, answering nothing.
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    let (bridge, _auth) = demo_signed_in(&format!(
        "jwks_uri = \"{jwks}\"\njwks_timeout = \"4s\"\njwks_refresh_min_interval = \"5m\"\n"
    ))
    .await;
    let started = Instant::now();
    let together = (0..5).map(|n| {
        let (url, token) = (bridge.url.clone(), junk_token(n));
        async move {
            let (status, _, _) = post(&url, Some(&token), TOOLS_LIST).await;
            (status, started.elapsed())
        }
    });
    let answers = futures::future::join_all(together).await;
    for (status, _) in &answers {
        assert_eq!(*status, 401);
    }
    let slowest = answers.iter().map(|(_, took)| *took).max().unwrap();
    // One 4 s fetch for all five, where five fetches in turn took 20 s.
    assert!(slowest < Duration::from_secs(8), "{answers:?}");
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 1);

    // The failed fetch is remembered: the next junk token waits for nothing.
    let again = Instant::now();
    let (status, _, _) = post(&bridge.url, Some(&junk_token(9)), TOOLS_LIST).await;
    assert_eq!(status, 401);
    assert!(
        again.elapsed() < Duration::from_secs(3),
        "{:?}",
        again.elapsed()
    );
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 1);
    holder.abort();
}

/// Tokens a strict reader of RFC 7515 and 7519 refuses: an issuer given as a
/// list (one StringOrURI, §4.1.1), and a `crit` header naming an extension
/// this verifier does not understand (§4.1.11). Both were accepted before.
#[tokio::test]
async fn an_issuer_list_and_an_unknown_critical_header_are_refused() {
    let (bridge, auth) = demo_signed_in("").await;
    let good = serde_json::to_value(auth.claims("demo-group").unwrap()).unwrap();
    let (status, _, _) = post(&bridge.url, Some(&auth.mint(&good).unwrap()), TOOLS_LIST).await;
    assert_eq!(
        status, 200,
        "the valid token must pass for the rest to mean anything"
    );

    let mut listed = good.clone();
    listed["iss"] = json!([good["iss"].clone(), "http://127.0.0.1:1"]);
    let crit: serde_json::Map<String, Value> =
        serde_json::from_value(json!({ "crit": ["urn:example:never"], "urn:example:never": true }))
            .unwrap();
    let cases = [
        ("iss as a list", auth.mint(&listed).unwrap()),
        ("unknown crit", auth.mint_with_header(&good, &crit).unwrap()),
    ];
    for (what, token) in cases {
        let (status, challenge, answer) = post(&bridge.url, Some(&token), TOOLS_LIST).await;
        assert_eq!(status, 401, "{what}: {answer}");
        assert!(challenge.contains("invalid_token"), "{what}: {challenge}");
    }
}

//! The demo authorization server, over HTTP on loopback: metadata, JWKS,
//! registration (RFC 7591 and client ID metadata documents), the code flow
//! with PKCE, refresh rotation, and the refusals a client must get.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use dms_bridge_testkit::oauth::{AccessClaims, DemoAuthConfig, DemoAuthServer, DemoUser};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

const RESOURCE: &str = "http://127.0.0.1:8080/mcp";
const OTHER_RESOURCE: &str = "http://127.0.0.1:8081/mcp";
const REDIRECT: &str = "http://127.0.0.1:33418/callback";

struct Harness {
    server: DemoAuthServer,
    http: reqwest::Client,
    cancel: CancellationToken,
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

async fn start() -> Harness {
    start_with(|_| {}).await
}

async fn start_with(change: impl FnOnce(&mut DemoAuthConfig)) -> Harness {
    let mut config = DemoAuthConfig::new(
        vec![RESOURCE.to_owned(), OTHER_RESOURCE.to_owned()],
        DemoUser::defaults(),
    );
    change(&mut config);
    let cancel = CancellationToken::new();
    let server = DemoAuthServer::start_with(loopback(), config, cancel.clone())
        .await
        .unwrap();
    let http = dms_bridge_testkit::http::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    Harness {
        server,
        http,
        cancel,
    }
}

/// A PKCE verifier and its S256 challenge.
fn pkce(seed: &str) -> (String, String) {
    let verifier = format!("{seed}-{}", "v".repeat(50));
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

impl Harness {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.issuer())
    }

    async fn register_raw(&self, body: Value) -> (StatusCode, Value) {
        let r = self
            .http
            .post(self.url("/register"))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = r.status();
        (status, r.json().await.unwrap())
    }

    async fn register(&self, redirect_uris: &[&str]) -> String {
        let (status, body) = self
            .register_raw(json!({
                "redirect_uris": redirect_uris,
                "client_name": "test client",
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["client_id"].as_str().unwrap().to_owned()
    }

    /// GET /authorize with these parameters: the status, and the redirect's
    /// query parameters if it redirected.
    async fn authorize(
        &self,
        params: &[(&str, &str)],
    ) -> (StatusCode, Option<Vec<(String, String)>>) {
        let r = self
            .http
            .get(self.url("/authorize"))
            .query(params)
            .send()
            .await
            .unwrap();
        let status = r.status();
        let location = r
            .headers()
            .get("location")
            .map(|l| reqwest::Url::parse(l.to_str().unwrap()).unwrap());
        let pairs = location.map(|l| {
            l.query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        });
        (status, pairs)
    }

    /// A code for `client_id`, with the challenge of `pkce(seed)` and `extra` parameters.
    async fn code(
        &self,
        client_id: &str,
        redirect_uri: &str,
        seed: &str,
        extra: &[(&str, &str)],
    ) -> String {
        let (_, challenge) = pkce(seed);
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", redirect_uri),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", "st-123"),
        ];
        params.extend_from_slice(extra);
        let (status, pairs) = self.authorize(&params).await;
        assert_eq!(status, StatusCode::FOUND);
        let pairs = pairs.unwrap();
        assert_eq!(param(&pairs, "error"), None, "{pairs:?}");
        param(&pairs, "code").unwrap().to_owned()
    }

    async fn token(&self, form: &[(&str, &str)]) -> (StatusCode, Value) {
        let r = self
            .http
            .post(self.url("/token"))
            .form(form)
            .send()
            .await
            .unwrap();
        let status = r.status();
        assert_eq!(
            r.headers()
                .get("cache-control")
                .map(|v| v.to_str().unwrap()),
            Some("no-store")
        );
        (status, r.json().await.unwrap())
    }

    async fn redeem(
        &self,
        client_id: &str,
        code: &str,
        redirect_uri: &str,
        seed: &str,
    ) -> (StatusCode, Value) {
        let (verifier, _) = pkce(seed);
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("client_id", client_id),
            ("code_verifier", &verifier),
        ])
        .await
    }

    async fn jwks(&self) -> JwkSet {
        self.http
            .get(self.url("/jwks"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The token's claims, verified against the published JWKS for `aud`.
    async fn verify(
        &self,
        token: &str,
        aud: &str,
    ) -> Result<AccessClaims, jsonwebtoken::errors::Error> {
        let header = jsonwebtoken::decode_header(token)?;
        assert_eq!(header.alg, Algorithm::ES256);
        let jwks = self.jwks().await;
        let jwk = jwks
            .find(header.kid.as_deref().unwrap())
            .expect("kid in the JWKS");
        let key = DecodingKey::from_jwk(jwk)?;
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_issuer(&[self.server.issuer()]);
        validation.set_audience(&[aud]);
        validation.set_required_spec_claims(&["exp", "nbf", "iss", "aud", "sub"]);
        Ok(jsonwebtoken::decode::<AccessClaims>(token, &key, &validation)?.claims)
    }
}

fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn metadata_describes_the_endpoints_and_what_is_supported() {
    let h = start().await;
    let issuer = h.server.issuer().to_owned();
    assert!(issuer.starts_with("http://127.0.0.1:"), "{issuer}");
    let get = |path: &str| {
        let url = h.url(path);
        let http = h.http.clone();
        async move {
            http.get(url)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let m = get("/.well-known/oauth-authorization-server").await;
    assert_eq!(m, get("/.well-known/openid-configuration").await);
    assert_eq!(m["issuer"], issuer);
    assert_eq!(m["authorization_endpoint"], format!("{issuer}/authorize"));
    assert_eq!(m["token_endpoint"], format!("{issuer}/token"));
    assert_eq!(m["registration_endpoint"], format!("{issuer}/register"));
    assert_eq!(m["jwks_uri"], h.server.jwks_uri());
    assert_eq!(m["response_types_supported"], json!(["code"]));
    assert_eq!(
        m["grant_types_supported"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(m["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(m["token_endpoint_auth_methods_supported"], json!(["none"]));
    assert_eq!(m["client_id_metadata_document_supported"], true);
    assert_eq!(m["authorization_response_iss_parameter_supported"], true);
    let scopes = m["scopes_supported"].as_array().unwrap();
    assert_eq!(scopes.len(), 9);
    for s in [
        "amcp:inventory:read",
        "amcp:leads:staff",
        "amcp:service:staff",
        "amcp:deals:write",
    ] {
        assert!(scopes.contains(&json!(s)), "{s}");
    }

    let jwks = get("/jwks").await;
    let keys = jwks["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["kid"], h.server.kid());
    assert_eq!(keys[0]["kty"], "EC");
    assert_eq!(keys[0]["crv"], "P-256");
    assert_eq!(keys[0]["alg"], "ES256");
    assert_eq!(keys[0]["use"], "sig");
    assert!(
        keys[0].get("d").is_none(),
        "the private key is not published"
    );
}

#[tokio::test]
async fn a_registered_client_gets_a_token_that_verifies_against_the_jwks() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let (_, challenge) = pkce("flow");
    let (status, pairs) = h
        .authorize(&[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("state", "xyz 1"),
            ("resource", OTHER_RESOURCE),
            ("login_hint", "demo-cdk"),
            // leads:staff is not the user's: intersected away.
            (
                "scope",
                "amcp:inventory:read amcp:leads:staff amcp:service:write",
            ),
        ])
        .await;
    assert_eq!(status, StatusCode::FOUND);
    let pairs = pairs.unwrap();
    assert_eq!(param(&pairs, "state"), Some("xyz 1"));
    assert_eq!(param(&pairs, "iss"), Some(h.server.issuer()));
    let code = param(&pairs, "code").unwrap();

    let (status, body) = h.redeem(&client_id, code, REDIRECT, "flow").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "amcp:inventory:read amcp:service:write");
    assert!(
        body["refresh_token"]
            .as_str()
            .is_some_and(|r| r.len() >= 40)
    );
    let token = body["access_token"].as_str().unwrap();
    assert_eq!(
        jsonwebtoken::decode_header(token).unwrap().kid.as_deref(),
        Some(h.server.kid())
    );

    let claims = h.verify(token, OTHER_RESOURCE).await.unwrap();
    assert_eq!(claims.iss, h.server.issuer());
    assert_eq!(claims.aud, OTHER_RESOURCE);
    assert_eq!(claims.sub, "demo-cdk");
    assert_eq!(claims.client_id, client_id);
    assert_eq!(claims.scope, "amcp:inventory:read amcp:service:write");
    assert_eq!(claims.amcp_dealerships, ["demo-cdk"]);
    assert_eq!(claims.exp - claims.iat, 3600);
    assert_eq!(claims.nbf, claims.iat);
    assert!(!claims.jti.is_empty());
    // The token is for the resource asked for, not the other one.
    assert!(h.verify(token, RESOURCE).await.is_err());
}

#[tokio::test]
async fn without_resource_scope_or_login_hint_the_defaults_apply() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let code = h.code(&client_id, REDIRECT, "defaults", &[]).await;
    let (status, body) = h.redeem(&client_id, &code, REDIRECT, "defaults").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let claims = h
        .verify(body["access_token"].as_str().unwrap(), RESOURCE)
        .await
        .unwrap();
    assert_eq!(claims.sub, "demo-group");
    assert_eq!(
        claims.amcp_dealerships,
        [
            "demo-cdk",
            "demo-feed",
            "demo-tekion",
            "demo-reynolds",
            "demo-dealertrack",
            "demo-xmlfeed"
        ]
    );
    assert_eq!(
        claims.scope,
        "amcp:inventory:read amcp:leads:read amcp:leads:write amcp:deals:read amcp:service:read amcp:service:write"
    );
}

/// Serves `document` at `/client.json` on loopback; its URL is the client id
/// unless the document names another.
async fn serve_metadata_document(
    document: impl Fn(&str) -> Value + Clone + Send + Sync + 'static,
    cancel: CancellationToken,
) -> String {
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let url = format!("http://{}/client.json", listener.local_addr().unwrap());
    let own = url.clone();
    let app = axum::Router::new().route(
        "/client.json",
        axum::routing::get(move || {
            let body = document(&own);
            async move { axum::Json(body) }
        }),
    );
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { cancel.cancelled().await })
            .await
            .unwrap();
    });
    url
}

#[tokio::test]
async fn a_client_id_metadata_document_is_fetched_and_its_redirect_uris_used() {
    let h = start().await;
    let client_id = serve_metadata_document(
        |url| {
            json!({
                "client_id": url,
                "client_name": "CIMD test client",
                // A native app's loopback redirect: any port will do.
                "redirect_uris": ["http://127.0.0.1/callback"],
                "token_endpoint_auth_method": "none",
            })
        },
        h.cancel.clone(),
    )
    .await;
    let redirect = "http://127.0.0.1:50123/callback";
    let code = h.code(&client_id, redirect, "cimd", &[]).await;
    let (status, body) = h.redeem(&client_id, &code, redirect, "cimd").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let claims = h
        .verify(body["access_token"].as_str().unwrap(), RESOURCE)
        .await
        .unwrap();
    assert_eq!(claims.client_id, client_id);

    // A redirect URI the document does not list is refused without a redirect.
    let (_, challenge) = pkce("cimd");
    let (status, pairs) = h
        .authorize(&[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", "http://127.0.0.1:50123/elsewhere"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(pairs.is_none());
}

#[tokio::test]
async fn a_metadata_document_naming_another_client_id_is_refused() {
    let h = start().await;
    let client_id = serve_metadata_document(
        |_| json!({ "client_id": "https://elsewhere.example/client.json", "redirect_uris": [REDIRECT] }),
        h.cancel.clone(),
    )
    .await;
    let (_, challenge) = pkce("cimd");
    let (status, pairs) = h
        .authorize(&[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(pairs.is_none());
}

/// Asks for a code for a metadata document client: the status.
async fn authorize_document_client(h: &Harness, client_id: &str) -> StatusCode {
    let (_, challenge) = pkce("doc");
    let (status, _) = h
        .authorize(&[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ])
        .await;
    status
}

#[tokio::test]
async fn a_metadata_document_past_the_size_cap_is_refused() {
    let h = start_with(|c| c.metadata_max_bytes = 1024).await;
    let small = serve_metadata_document(
        |url| json!({ "client_id": url, "redirect_uris": [REDIRECT], "padding": "x".repeat(500) }),
        h.cancel.clone(),
    )
    .await;
    assert_eq!(
        authorize_document_client(&h, &small).await,
        StatusCode::FOUND
    );
    let large = serve_metadata_document(
        |url| json!({ "client_id": url, "redirect_uris": [REDIRECT], "padding": "x".repeat(2000) }),
        h.cancel.clone(),
    )
    .await;
    assert_eq!(
        authorize_document_client(&h, &large).await,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn a_metadata_document_that_is_slow_to_come_is_refused() {
    let h = start_with(|c| c.metadata_timeout = Duration::from_millis(200)).await;
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let client_id = format!("http://{}/client.json", listener.local_addr().unwrap());
    let own = client_id.clone();
    let app = axum::Router::new().route(
        "/client.json",
        axum::routing::get(move || {
            let own = own.clone();
            async move {
                tokio::time::sleep(Duration::from_secs(3)).await;
                axum::Json(json!({ "client_id": own, "redirect_uris": [REDIRECT] }))
            }
        }),
    );
    let cancel = h.cancel.clone();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { cancel.cancelled().await })
            .await
            .unwrap();
    });
    let started = std::time::Instant::now();
    assert_eq!(
        authorize_document_client(&h, &client_id).await,
        StatusCode::BAD_REQUEST
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn loopback_client_ids_can_be_turned_off() {
    let h = start_with(|c| c.loopback_client_ids = false).await;
    let client_id = serve_metadata_document(
        |url| json!({ "client_id": url, "redirect_uris": [REDIRECT] }),
        h.cancel.clone(),
    )
    .await;
    let (_, challenge) = pkce("cimd");
    let (status, _) = h
        .authorize(&[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_wrong_verifier_is_an_invalid_grant_and_uses_up_the_code() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let code = h.code(&client_id, REDIRECT, "right", &[]).await;
    let (status, body) = h.redeem(&client_id, &code, REDIRECT, "wrong").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_grant");
    let (status, body) = h.redeem(&client_id, &code, REDIRECT, "right").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_grant");
}

#[tokio::test]
async fn a_code_is_single_use() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let code = h.code(&client_id, REDIRECT, "once", &[]).await;
    let (status, _) = h.redeem(&client_id, &code, REDIRECT, "once").await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = h.redeem(&client_id, &code, REDIRECT, "once").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_grant");
}

#[tokio::test]
async fn an_expired_code_is_an_invalid_grant() {
    let h = start_with(|c| c.code_lifetime = Duration::from_millis(1)).await;
    let client_id = h.register(&[REDIRECT]).await;
    let code = h.code(&client_id, REDIRECT, "late", &[]).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (status, body) = h.redeem(&client_id, &code, REDIRECT, "late").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_grant");
}

#[tokio::test]
async fn a_code_is_bound_to_its_client_and_redirect_uri() {
    let h = start().await;
    let client_id = h
        .register(&[REDIRECT, "http://127.0.0.1:33418/other"])
        .await;
    let other_client = h.register(&[REDIRECT]).await;
    let code = h.code(&client_id, REDIRECT, "bound", &[]).await;
    let (status, body) = h.redeem(&other_client, &code, REDIRECT, "bound").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    let code = h.code(&client_id, REDIRECT, "bound", &[]).await;
    let (status, body) = h
        .redeem(&client_id, &code, "http://127.0.0.1:33418/other", "bound")
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
}

#[tokio::test]
async fn an_unregistered_redirect_uri_gets_a_page_not_a_redirect() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let (_, challenge) = pkce("x");
    for redirect in [
        "http://127.0.0.1:33418/evil",
        "https://evil.example/callback",
    ] {
        let (status, pairs) = h
            .authorize(&[
                ("response_type", "code"),
                ("client_id", &client_id),
                ("redirect_uri", redirect),
                ("code_challenge", &challenge),
                ("code_challenge_method", "S256"),
            ])
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{redirect}");
        assert!(pairs.is_none(), "{redirect}");
    }
    // An unknown client too.
    let (status, pairs) = h
        .authorize(&[
            ("response_type", "code"),
            ("client_id", "no-such-client"),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(pairs.is_none());
}

#[tokio::test]
async fn pkce_with_s256_is_required() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let (_, challenge) = pkce("p");
    let cases: [&[(&str, &str)]; 3] = [
        &[
            ("code_challenge", &challenge),
            ("code_challenge_method", "plain"),
        ],
        &[("code_challenge", &challenge)],
        &[("code_challenge_method", "S256")],
    ];
    for extra in cases {
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client_id.as_str()),
            ("redirect_uri", REDIRECT),
            ("state", "s"),
        ];
        params.extend_from_slice(extra);
        let (status, pairs) = h.authorize(&params).await;
        assert_eq!(status, StatusCode::FOUND, "{extra:?}");
        let pairs = pairs.unwrap();
        assert_eq!(param(&pairs, "error"), Some("invalid_request"), "{extra:?}");
        assert_eq!(param(&pairs, "code"), None);
        assert_eq!(param(&pairs, "state"), Some("s"));
        assert_eq!(param(&pairs, "iss"), Some(h.server.issuer()));
    }
}

#[tokio::test]
async fn other_authorization_errors_are_redirected_with_their_codes() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let (_, challenge) = pkce("e");
    let cases: [(&[(&str, &str)], &str); 4] = [
        (&[("response_type", "token")], "unsupported_response_type"),
        (
            &[("resource", "http://127.0.0.1:9999/mcp")],
            "invalid_target",
        ),
        (&[("login_hint", "nobody")], "access_denied"),
        (&[("scope", "amcp:deals:write")], "invalid_scope"),
    ];
    for (extra, error) in cases {
        let mut params = vec![
            ("client_id", client_id.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
        ];
        if !extra.iter().any(|(k, _)| *k == "response_type") {
            params.push(("response_type", "code"));
        }
        params.extend_from_slice(extra);
        let (status, pairs) = h.authorize(&params).await;
        assert_eq!(status, StatusCode::FOUND, "{extra:?}");
        assert_eq!(param(&pairs.unwrap(), "error"), Some(error), "{extra:?}");
    }
}

#[tokio::test]
async fn a_token_request_for_another_resource_than_the_codes_is_refused() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let code = h
        .code(&client_id, REDIRECT, "res", &[("resource", RESOURCE)])
        .await;
    let (verifier, _) = pkce("res");
    let (status, body) = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
            ("resource", OTHER_RESOURCE),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_target");
}

#[tokio::test]
async fn refresh_tokens_rotate_and_each_is_usable_once() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let code = h
        .code(&client_id, REDIRECT, "rot", &[("login_hint", "demo-cdk")])
        .await;
    let (_, first) = h.redeem(&client_id, &code, REDIRECT, "rot").await;
    let old = first["refresh_token"].as_str().unwrap();

    let (status, second) = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", old),
            ("client_id", &client_id),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let new = second["refresh_token"].as_str().unwrap();
    assert_ne!(new, old);
    let claims = h
        .verify(second["access_token"].as_str().unwrap(), RESOURCE)
        .await
        .unwrap();
    assert_eq!(claims.sub, "demo-cdk");

    let (status, body) = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", old),
            ("client_id", &client_id),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_grant");

    // The new one works, and may narrow the scope, but not widen it.
    let (status, third) = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", new),
            ("client_id", &client_id),
            ("scope", "amcp:inventory:read"),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{third}");
    assert_eq!(third["scope"], "amcp:inventory:read");
    let (status, body) = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", third["refresh_token"].as_str().unwrap()),
            ("client_id", &client_id),
            ("scope", "amcp:deals:write"),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_scope");
}

#[tokio::test]
async fn the_token_endpoint_refuses_unknown_clients_and_grant_types() {
    let h = start().await;
    let client_id = h.register(&[REDIRECT]).await;
    let (status, body) = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", "x"),
            ("client_id", "nobody"),
        ])
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client"))
    );
    let (status, body) = h
        .token(&[("grant_type", "password"), ("client_id", &client_id)])
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("unsupported_grant_type"))
    );
    let (status, body) = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("client_id", &client_id),
        ])
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );
    let (status, body) = h.token(&[("client_id", &client_id)]).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );
}

#[tokio::test]
async fn registration_checks_the_metadata() {
    let h = start().await;
    for uri in [
        "cursor://anysphere.cursor-retrieval/oauth/callback",
        "https://app.example/cb",
        "http://localhost:6274/oauth/callback",
    ] {
        h.register(&[uri]).await;
    }
    let cases = [
        (
            json!({ "client_name": "no redirect" }),
            "invalid_redirect_uri",
        ),
        (json!({ "redirect_uris": [] }), "invalid_redirect_uri"),
        (
            json!({ "redirect_uris": ["http://app.example/cb"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["https://app.example/cb#frag"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["javascript:alert(1)"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["/relative"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt" }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": [REDIRECT], "grant_types": ["client_credentials"] }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": [REDIRECT], "response_types": ["token"] }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": "not a list" }),
            "invalid_client_metadata",
        ),
    ];
    for (body, error) in cases {
        let (status, answer) = h.register_raw(body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(answer["error"], error, "{body}");
    }
    let (status, answer) = h
        .register_raw(json!({ "redirect_uris": [REDIRECT], "client_name": "n" }))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(answer["redirect_uris"], json!([REDIRECT]));
    assert_eq!(answer["client_name"], "n");
    assert_eq!(answer["token_endpoint_auth_method"], "none");
    assert_eq!(answer["response_types"], json!(["code"]));
}

#[tokio::test]
async fn the_oldest_clients_are_forgotten_past_the_cap() {
    let h = start_with(|c| c.max_clients = 2).await;
    let first = h.register(&[REDIRECT]).await;
    let second = h.register(&[REDIRECT]).await;
    let third = h.register(&[REDIRECT]).await;
    h.code(&second, REDIRECT, "cap", &[]).await;
    h.code(&third, REDIRECT, "cap", &[]).await;
    let (_, challenge) = pkce("cap");
    let (status, _) = h
        .authorize(&[
            ("response_type", "code"),
            ("client_id", &first),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_oldest_codes_are_forgotten_past_the_cap() {
    let h = start_with(|c| c.max_codes = 2).await;
    let client_id = h.register(&[REDIRECT]).await;
    let first = h.code(&client_id, REDIRECT, "codes", &[]).await;
    let second = h.code(&client_id, REDIRECT, "codes", &[]).await;
    let third = h.code(&client_id, REDIRECT, "codes", &[]).await;
    let (status, body) = h.redeem(&client_id, &first, REDIRECT, "codes").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    for code in [second, third] {
        let (status, body) = h.redeem(&client_id, &code, REDIRECT, "codes").await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

#[tokio::test]
async fn minted_tokens_are_signed_with_the_published_key_or_a_foreign_one() {
    let h = start().await;
    let claims = h.server.claims("demo-group").unwrap();
    assert_eq!(claims.aud, RESOURCE);
    assert_eq!(claims.amcp_dealerships.len(), 6);
    let good = h.server.mint(&claims).unwrap();
    assert_eq!(h.verify(&good, RESOURCE).await.unwrap(), claims);

    let expired = AccessClaims {
        exp: claims.iat - 600,
        ..claims.clone()
    };
    let err = h
        .verify(&h.server.mint(&expired).unwrap(), RESOURCE)
        .await
        .unwrap_err();
    assert_eq!(
        *err.kind(),
        jsonwebtoken::errors::ErrorKind::ExpiredSignature
    );

    let wrong_aud = AccessClaims {
        aud: "https://other.example/mcp".into(),
        ..claims.clone()
    };
    let err = h
        .verify(&h.server.mint(&wrong_aud).unwrap(), RESOURCE)
        .await
        .unwrap_err();
    assert_eq!(
        *err.kind(),
        jsonwebtoken::errors::ErrorKind::InvalidAudience
    );

    let wrong_iss = AccessClaims {
        iss: "http://127.0.0.1:1".into(),
        ..claims.clone()
    };
    let err = h
        .verify(&h.server.mint(&wrong_iss).unwrap(), RESOURCE)
        .await
        .unwrap_err();
    assert_eq!(*err.kind(), jsonwebtoken::errors::ErrorKind::InvalidIssuer);

    let foreign = h.server.mint_with_foreign_key(&claims).unwrap();
    assert_eq!(
        jsonwebtoken::decode_header(&foreign)
            .unwrap()
            .kid
            .as_deref(),
        Some(h.server.kid())
    );
    let err = h.verify(&foreign, RESOURCE).await.unwrap_err();
    assert_eq!(
        *err.kind(),
        jsonwebtoken::errors::ErrorKind::InvalidSignature
    );

    assert!(h.server.claims("nobody").is_err());
}

#[tokio::test]
async fn browsers_may_call_it_from_any_origin() {
    let h = start().await;
    let r = h
        .http
        .request(reqwest::Method::OPTIONS, h.url("/token"))
        .header("origin", "http://localhost:6274")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    assert_eq!(r.headers()["access-control-allow-origin"], "*");
    assert!(
        r.headers()["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("POST")
    );
    let r = h
        .http
        .get(h.url("/.well-known/oauth-authorization-server"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["access-control-allow-origin"], "*");
}

#[tokio::test]
async fn the_server_needs_a_resource_and_users() {
    let cancel = CancellationToken::new();
    assert!(
        DemoAuthServer::start(loopback(), vec![], DemoUser::defaults(), cancel.clone())
            .await
            .is_err()
    );
    assert!(
        DemoAuthServer::start(loopback(), vec![RESOURCE.into()], vec![], cancel.clone())
            .await
            .is_err()
    );
    let twice = vec![
        DemoUser::new("a", ["d"], ["s"]),
        DemoUser::new("a", ["d"], ["s"]),
    ];
    assert!(
        DemoAuthServer::start(loopback(), vec![RESOURCE.into()], twice, cancel)
            .await
            .is_err()
    );
}

//! The MCP SDK's own OAuth client (rmcp, the version the bridge pins) signs in
//! against the demo authorization server the way it would against a dealer's:
//! protected resource metadata, RFC 8414 discovery, dynamic registration, the
//! code flow with PKCE and a resource indicator, the `iss` check, and a refresh.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;

use dms_bridge_testkit::oauth::{AccessClaims, DemoAuthServer, DemoUser};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use rmcp::transport::auth::{AuthorizationRequest, OAuthState};
use serde_json::json;
use tokio_util::sync::CancellationToken;

async fn verify(
    http: &reqwest::Client,
    auth: &DemoAuthServer,
    token: &str,
    aud: &str,
) -> AccessClaims {
    let jwks: JwkSet = http
        .get(auth.jwks_uri())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let kid = jsonwebtoken::decode_header(token).unwrap().kid.unwrap();
    let key = DecodingKey::from_jwk(jwks.find(&kid).unwrap()).unwrap();
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_issuer(&[auth.issuer()]);
    validation.set_audience(&[aud]);
    jsonwebtoken::decode::<AccessClaims>(token, &key, &validation)
        .unwrap()
        .claims
}

#[tokio::test]
async fn rmcps_oauth_client_signs_in_and_refreshes() {
    // rmcp's OAuth client builds a reqwest client of its own.
    dms_bridge_testkit::http::install_tls_provider();
    let cancel = CancellationToken::new();
    // A stand-in for the bridge: only its protected resource metadata.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let bridge = listener.local_addr().unwrap();
    let resource = format!("http://{bridge}/mcp");
    let auth = DemoAuthServer::start(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        vec![resource.clone()],
        DemoUser::defaults(),
        cancel.child_token(),
    )
    .await
    .unwrap();
    let metadata = json!({
        "resource": resource,
        "authorization_servers": [auth.issuer()],
        "scopes_supported": ["amcp:inventory:read", "amcp:leads:write"],
    });
    let app = axum::Router::new().route(
        "/.well-known/oauth-protected-resource/mcp",
        axum::routing::get(move || {
            let metadata = metadata.clone();
            async move { axum::Json(metadata) }
        }),
    );
    let stop = cancel.child_token();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
            .unwrap();
    });

    let mut state = OAuthState::new(resource.as_str(), None).await.unwrap();
    let mut request = AuthorizationRequest::new("http://127.0.0.1:45123/callback")
        .with_scopes(["amcp:inventory:read", "amcp:leads:write"])
        .with_client_name("rmcp interop test");
    // As after a 401 from the bridge.
    request.challenge = Some(format!(
        "Bearer resource_metadata=\"http://{bridge}/.well-known/oauth-protected-resource/mcp\""
    ));
    state.start_authorization(request).await.unwrap();
    let url = state.get_authorization_url().await.unwrap();
    assert!(
        url.starts_with(&format!("{}/authorize?", auth.issuer())),
        "{url}"
    );

    // The browser's part: the server consents at once and redirects.
    let http = dms_bridge_testkit::http::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let answer = http.get(&url).send().await.unwrap();
    assert_eq!(answer.status(), reqwest::StatusCode::FOUND);
    let callback = answer.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        callback.starts_with("http://127.0.0.1:45123/callback?"),
        "no code: {}",
        callback.split('?').next().unwrap()
    );
    state.handle_callback_url(&callback).await.unwrap();

    let manager = state.into_authorization_manager().unwrap();
    let token = manager.get_access_token().await.unwrap();
    let claims = verify(&http, &auth, &token, &resource).await;
    assert_eq!(claims.sub, "demo-group");
    assert_eq!(claims.scope, "amcp:inventory:read amcp:leads:write");
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

    manager.refresh_token().await.unwrap();
    let refreshed = manager.get_access_token().await.unwrap();
    assert_ne!(refreshed, token);
    let again = verify(&http, &auth, &refreshed, &resource).await;
    assert_eq!(again.scope, claims.scope);
    assert_ne!(again.jti, claims.jti);
    cancel.cancel();
}

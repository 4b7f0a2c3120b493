//! What can go wrong starting the server or minting a token, and the OAuth
//! error answers its endpoints give (RFC 6749 §5.2, RFC 7591 §3.2.2).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Starting the demo authorization server, or minting a token with its keys.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("the demo authorization server needs at least one resource")]
    NoResource,
    #[error("the demo authorization server needs at least one demo user")]
    NoUser,
    #[error("demo user {0:?} is listed twice")]
    DuplicateUser(String),
    #[error("unknown demo user {0:?}")]
    UnknownUser(String),
    #[error("binding the authorization server's port: {0}")]
    Io(#[from] std::io::Error),
    #[error("making the signing key: {0}")]
    Key(String),
    #[error("signing a token: {0}")]
    Jwt(#[from] jsonwebtoken::errors::Error),
    #[error("building the client that fetches client ID metadata documents: {0}")]
    Http(#[from] reqwest::Error),
}

/// An OAuth error answer: `{"error": …, "error_description": …}`, never cached.
#[derive(Debug)]
pub(super) struct Rejection {
    pub status: StatusCode,
    pub error: &'static str,
    pub description: String,
}

impl Rejection {
    pub fn bad_request(error: &'static str, description: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            error,
            description: description.into(),
        }
    }

    /// 401 `invalid_client`: the token endpoint does not know the client.
    pub fn invalid_client(description: impl Into<String>) -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            error: "invalid_client",
            description: description.into(),
        }
    }

    pub fn server_error(description: impl Into<String>) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            error: "server_error",
            description: description.into(),
        }
    }
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        tracing::debug!(error = self.error, description = %self.description, "OAuth request refused.");
        let body =
            serde_json::json!({ "error": self.error, "error_description": self.description });
        let mut response = (self.status, Json(body)).into_response();
        no_store(&mut response);
        response
    }
}

/// Token and registration answers carry credentials: no cache may keep them.
pub(super) fn no_store(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}

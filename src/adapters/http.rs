//! HTTP plumbing shared by adapter kinds: bounded body reads and the mapping of
//! transport failures and status codes onto [`AdapterError`].

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

use super::AdapterError;

/// Largest upstream body read into memory; a bigger one is refused, not buffered.
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Most allocated up front for a body from its `Content-Length`.
const PRESIZE_LIMIT: usize = 4 * 1024 * 1024;

fn too_large() -> AdapterError {
    AdapterError::InvalidResponse(format!("body larger than {MAX_BODY_BYTES} bytes"))
}

/// A completed upstream exchange.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Sends `request` and reads the whole body (up to [`MAX_BODY_BYTES`]).
pub async fn send(request: reqwest::RequestBuilder) -> Result<Reply, AdapterError> {
    // Continue the caller's trace upstream (W3C trace context).
    let request = match crate::telemetry::otlp::outgoing_traceparent() {
        Some(traceparent) => request.header("traceparent", traceparent),
        None => request,
    };
    let mut response = request.send().await.map_err(transport_error)?;
    let status = response.status();
    let headers = response.headers().clone();
    let announced = response.content_length().unwrap_or(0);
    if announced > MAX_BODY_BYTES as u64 {
        return Err(too_large());
    }
    // Room for the announced body up front (an 80 KB page otherwise grows and is
    // copied five times), but not more than a lying header could make us waste.
    let mut body = BytesMut::with_capacity((announced as usize).min(PRESIZE_LIMIT));
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Reply {
        status,
        headers,
        body: body.freeze(),
    })
}

/// Classifies a non-success status. `vendor_code` is a code the profile recognised.
pub fn status_error(
    status: StatusCode,
    headers: &HeaderMap,
    vendor_code: Option<String>,
) -> AdapterError {
    match status.as_u16() {
        401 | 403 => AdapterError::Unauthorized {
            status: status.as_u16(),
        },
        408 | 504 => AdapterError::Timeout,
        429 => AdapterError::RateLimited {
            retry_after: retry_after(headers),
        },
        500..=599 => AdapterError::Unavailable(format!("HTTP {}", status.as_u16())),
        code => AdapterError::Rejected {
            status: code,
            vendor_code,
        },
    }
}

/// `Retry-After` as seconds or an HTTP date.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let delta = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    delta.to_std().ok()
}

fn transport_error(e: reqwest::Error) -> AdapterError {
    if e.is_timeout() {
        AdapterError::Timeout
    } else if e.is_connect() {
        AdapterError::Unavailable("connection failed".into())
    } else if e.is_body() || e.is_decode() {
        AdapterError::Unavailable("connection dropped while reading the answer".into())
    } else {
        AdapterError::Unavailable("request failed".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wiremock::matchers::path;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    async fn answer(body: Vec<u8>) -> Result<Reply, AdapterError> {
        let server = MockServer::start().await;
        Mock::given(path("/page"))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(body))
            .mount(&server)
            .await;
        send(
            crate::net::client_builder()
                .build()
                .unwrap()
                .get(format!("{}/page", server.uri())),
        )
        .await
    }

    #[tokio::test]
    async fn a_body_arrives_whole_and_in_order() {
        let body: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let reply = answer(body.clone()).await.unwrap();
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.body.as_ref(), body.as_slice());
    }

    #[tokio::test]
    async fn a_body_announced_over_the_limit_is_refused_before_reading() {
        // The upstream announces more than the limit, sends a few bytes and
        // keeps the connection open: reading the body would wait forever.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut request).await;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{{\"re",
                MAX_BODY_BYTES + 1
            );
            tokio::io::AsyncWriteExt::write_all(&mut socket, head.as_bytes())
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        let request = crate::net::client_builder()
            .build()
            .unwrap()
            .get(format!("http://{addr}/page"));
        let error = tokio::time::timeout(Duration::from_secs(5), send(request))
            .await
            .expect("refused without reading the body")
            .unwrap_err();
        assert!(
            matches!(&error, AdapterError::InvalidResponse(m) if m.contains("larger than")),
            "{error:?}"
        );
        server.abort();
    }
}

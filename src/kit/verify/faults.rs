//! The fault matrix: what an upstream can do wrong, and what an agent must be
//! told when it does. Each cell puts one fault in front of the upstream's API
//! (its token endpoint stays as it is) and checks the answer: the stable
//! code, whether it says to retry, and that none of the upstream's text or a
//! customer's data reaches the agent.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::kit::proxy::{self, ProxyRequest, ProxyResponse, Tap, Verdict};

/// What the upstream's API does wrong in one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// This status, with `Retry-After` when given, and a plain-text body.
    Status {
        status: u16,
        retry_after: Option<u64>,
        body: &'static str,
    },
    /// No answer until well after the upstream's timeout.
    Slow,
    /// A 200 whose body stops halfway, in the upstream's own format.
    CutOff,
    /// A 200 with an HTML maintenance page.
    HtmlPage,
    /// A 200 in the other format: XML from a JSON API, JSON from an XML one.
    WrongFormat,
    /// A 500 whose body echoes a customer's data and the vendor's internals.
    PiiEcho,
    /// The token is refused once, then everything is as it was.
    ExpiredToken,
    /// The connection is reset once the request is in.
    Reset,
    /// Nothing listens at the address.
    Refused,
}

/// What the agent must be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// The call fails with this code, retryable or not.
    Fails {
        code: &'static str,
        retryable: bool,
        retry_after_ms: Option<u64>,
    },
    /// The call succeeds (the bridge recovered on its own).
    Succeeds,
}

pub struct Cell {
    pub name: &'static str,
    pub fault: Fault,
    /// Text of the fault that must never reach the agent.
    pub leaks: &'static [&'static str],
}

const fn fails(code: &'static str, retryable: bool) -> Expected {
    Expected::Fails {
        code,
        retryable,
        retry_after_ms: None,
    }
}

const fn status(status: u16, body: &'static str) -> Fault {
    Fault::Status {
        status,
        retry_after: None,
        body,
    }
}

/// Customer data and internals the PII-echo answer carries.
pub const ECHOED: &[&str] = &[
    "Dana",
    "Whitfield",
    "dana.whitfield@example.com",
    "+15550100188",
    "12 Elm St",
    "NullPointerException",
    "com.vendor.internal",
];

const SERVER_TEXT: &[&str] = &["IllegalStateException", "com.vendor", "HTTP 5"];

pub const CELLS: &[Cell] = &[
    Cell {
        name: "credentials refused (401)",
        fault: status(401, "Unauthorized: bad credentials for tenant 4711"),
        leaks: &["bad credentials", "tenant 4711"],
    },
    Cell {
        name: "credentials refused (403)",
        fault: status(403, "Forbidden: client id-7 may not read dealer 4711"),
        leaks: &["Forbidden", "id-7", "dealer 4711"],
    },
    Cell {
        name: "token expired (refused once)",
        fault: Fault::ExpiredToken,
        leaks: &["token expired", "tenant 4711"],
    },
    Cell {
        name: "throttled (429 with Retry-After)",
        fault: Fault::Status {
            status: 429,
            retry_after: Some(7),
            body: "Slow down, subscriber sub-123 spent its quota",
        },
        leaks: &["Slow down", "sub-123"],
    },
    Cell {
        name: "throttled (429 without Retry-After)",
        fault: status(429, "Too many requests from 10.20.30.40"),
        leaks: &["Too many", "10.20.30.40"],
    },
    Cell {
        name: "server error (500)",
        fault: status(
            500,
            "HTTP 500: java.lang.IllegalStateException in com.vendor.Api",
        ),
        leaks: SERVER_TEXT,
    },
    Cell {
        name: "bad gateway (502)",
        fault: status(
            502,
            "HTTP 502: java.lang.IllegalStateException in com.vendor.Api",
        ),
        leaks: SERVER_TEXT,
    },
    Cell {
        name: "unavailable (503)",
        fault: status(
            503,
            "HTTP 503: java.lang.IllegalStateException in com.vendor.Api",
        ),
        leaks: SERVER_TEXT,
    },
    Cell {
        name: "gateway timeout (504)",
        fault: status(504, "HTTP 504: app-7.internal did not answer"),
        leaks: &["app-7.internal"],
    },
    Cell {
        name: "slower than the timeout",
        fault: Fault::Slow,
        leaks: &["late answer"],
    },
    Cell {
        name: "request refused (404)",
        fault: status(404, "Not Found: no dealer 4711 behind /v2/x"),
        leaks: &["Not Found", "dealer 4711", "/v2/x"],
    },
    Cell {
        name: "cut-off body",
        fault: Fault::CutOff,
        leaks: &["Dana", "Whitfield", "cut-off"],
    },
    Cell {
        name: "HTML page with 200",
        fault: Fault::HtmlPage,
        leaks: &["<html", "maintenance", "nginx"],
    },
    Cell {
        name: "wrong content type",
        fault: Fault::WrongFormat,
        leaks: &["Dana", "Whitfield", "wrong-format"],
    },
    Cell {
        name: "500 echoing customer data",
        fault: Fault::PiiEcho,
        leaks: ECHOED,
    },
    Cell {
        name: "connection reset",
        fault: Fault::Reset,
        leaks: &["Connection reset", "os error", "connection closed"],
    },
    Cell {
        name: "connection refused",
        fault: Fault::Refused,
        leaks: &["Connection refused", "os error", "tcp connect"],
    },
];

impl Cell {
    /// Whether the cell applies to an upstream that does (or does not) sign
    /// in for a token: a refused token is a cell only where there is one.
    pub fn applies(&self, refreshes_tokens: bool) -> bool {
        self.fault != Fault::ExpiredToken || refreshes_tokens
    }

    /// What the agent must be told when this cell's fault hits the upstream.
    pub fn expected(&self) -> Expected {
        const UNAVAILABLE: Expected = fails("upstream.unavailable", true);
        const UNREADABLE: Expected = fails("upstream.invalid_response", false);
        match self.fault {
            Fault::Status {
                status: 401 | 403, ..
            } => fails("upstream.rejected", false),
            Fault::Status {
                status: 429,
                retry_after,
                ..
            } => Expected::Fails {
                code: "upstream.rate_limited",
                retryable: true,
                retry_after_ms: retry_after.map(|s| s * 1000),
            },
            Fault::Status { status: 504, .. } | Fault::Slow => fails("upstream.timeout", true),
            Fault::Status { status: 404, .. } => fails("upstream.rejected", false),
            Fault::Status { .. } | Fault::PiiEcho | Fault::Reset | Fault::Refused => UNAVAILABLE,
            Fault::CutOff | Fault::HtmlPage | Fault::WrongFormat => UNREADABLE,
            // The bridge fetches a new token and asks again.
            Fault::ExpiredToken => Expected::Succeeds,
        }
    }
}

/// The formats an upstream answers in, for the faults that imitate its answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Xml,
    Delimited,
}

/// A fault in front of the upstream: a loopback address the bridge is
/// pointed at instead of the upstream's own; stopped when dropped.
pub struct FaultFront {
    pub addr: SocketAddr,
    stop: CancellationToken,
    /// The refused fault's port, held (bound, not listening) while the cell runs.
    _held: Option<socket2::Socket>,
}

impl Drop for FaultFront {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl FaultFront {
    /// Starts the front for `fault`; `upstream` is the real base URL, which
    /// only the expired-token fault passes requests on to once it has refused one.
    pub async fn start(
        fault: Fault,
        format: Format,
        upstream: &str,
        slow_for: Duration,
    ) -> std::io::Result<Self> {
        let stop = CancellationToken::new();
        if fault == Fault::ExpiredToken {
            return Self::refusing_once(upstream, stop).await;
        }
        if fault == Fault::Refused {
            let (held, addr) = refusing_port()?;
            return Ok(Self {
                addr,
                stop,
                _held: Some(held),
            });
        }
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        match fault {
            // Held above, without a listener.
            Fault::Refused => {}
            Fault::Reset => {
                tokio::spawn(reset_all(listener, stop.clone()));
            }
            _ => {
                let answer = Arc::new(Answerer {
                    fault,
                    format,
                    slow_for,
                });
                let app = axum::Router::new().fallback(move || {
                    let answer = answer.clone();
                    async move { answer.respond().await }
                });
                let until = stop.clone();
                tokio::spawn(async move {
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(until.cancelled_owned())
                        .await;
                });
            }
        }
        Ok(Self {
            addr,
            stop,
            _held: None,
        })
    }

    /// The kit's forwarding proxy in front of the upstream, refusing the
    /// first request as an expired token would be refused.
    async fn refusing_once(upstream: &str, stop: CancellationToken) -> std::io::Result<Self> {
        let origin = crate::kit::reroute::origin(upstream).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not an http(s) URL")
        })?;
        let listen = SocketAddr::from(([127, 0, 0, 1], 0));
        let tap = Arc::new(RefuseOnce(AtomicBool::new(false)));
        let proxy = proxy::start(listen, &origin, tap, stop.clone())
            .await
            .map_err(std::io::Error::other)?;
        Ok(Self {
            addr: proxy.addr,
            stop,
            _held: None,
        })
    }

    /// The upstream's URL with this front's origin: `base`'s path is kept.
    pub fn url_for(&self, base: &str) -> String {
        let path = url::Url::parse(base)
            .map(|u| u.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        format!("http://{}{path}", self.addr)
    }
}

/// Reads what the bridge sends, then resets the connection.
async fn reset_all(listener: TcpListener, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((mut stream, _)) = accepted else {
            continue;
        };
        tokio::spawn(async move {
            let mut buffer = [0u8; 8192];
            let _ = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buffer)).await;
            // Linger zero: closing sends a reset instead of a clean end.
            let _ = stream.set_zero_linger();
            drop(stream);
        });
    }
}

struct Answerer {
    fault: Fault,
    format: Format,
    slow_for: Duration,
}

impl Answerer {
    async fn respond(&self) -> Response {
        match self.fault {
            Fault::Status {
                status,
                retry_after,
                body,
            } => {
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
                let mut response = (status, [("content-type", "text/plain")], body).into_response();
                if let Some(seconds) = retry_after
                    && let Ok(value) = seconds.to_string().parse()
                {
                    response.headers_mut().insert("retry-after", value);
                }
                response
            }
            Fault::Slow => {
                tokio::time::sleep(self.slow_for).await;
                (StatusCode::SERVICE_UNAVAILABLE, "late answer").into_response()
            }
            Fault::CutOff => self.own_format(cut_off(self.format)),
            Fault::HtmlPage => (
                StatusCode::OK,
                [("content-type", "text/html")],
                "<!DOCTYPE html><html><head><title>Maintenance</title></head><body>\
                 <h1>Down for maintenance</h1><p>nginx/1.25.3</p></body></html>",
            )
                .into_response(),
            Fault::WrongFormat => wrong_format(self.format),
            Fault::PiiEcho => pii_echo(self.format),
            // Served elsewhere: by the forwarding proxy, a reset, a closed port.
            Fault::ExpiredToken | Fault::Reset | Fault::Refused => {
                StatusCode::BAD_GATEWAY.into_response()
            }
        }
    }

    fn own_format(&self, body: &'static str) -> Response {
        let content_type = match self.format {
            Format::Json => "application/json",
            Format::Xml => "text/xml; charset=utf-8",
            Format::Delimited => "text/csv",
        };
        (StatusCode::OK, [("content-type", content_type)], body).into_response()
    }
}

/// Answers the first request as an expired token is answered, then passes
/// every request on.
struct RefuseOnce(AtomicBool);

impl Tap for RefuseOnce {
    fn before(&self, _request: &ProxyRequest) -> Verdict {
        if self.0.swap(true, Ordering::SeqCst) {
            return Verdict::Forward;
        }
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("text/plain"));
        Verdict::Answer(ProxyResponse {
            status: StatusCode::UNAUTHORIZED,
            headers,
            body: Bytes::from_static(b"token expired for tenant 4711"),
        })
    }
}

fn cut_off(format: Format) -> &'static str {
    match format {
        Format::Json => {
            r#"{"summary":{"totalCount":1},"results":[{"vin":"5NMCDKFR3SH382627","customer":"Dana Whitfield","note":"cut-off"#
        }
        Format::Xml => {
            r#"<?xml version="1.0"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><Response><Record><CustomerName>WHITFIELD, DANA cut-off"#
        }
        Format::Delimited => "DealerID,Type,Stock,Dana Whitfield cut-off",
    }
}

fn wrong_format(format: Format) -> Response {
    match format {
        Format::Json | Format::Delimited => (
            StatusCode::OK,
            [("content-type", "text/xml")],
            "<?xml version=\"1.0\"?><Records><Record><Customer>Dana Whitfield</Customer>\
             <Note>wrong-format</Note></Record></Records>",
        )
            .into_response(),
        Format::Xml => (
            StatusCode::OK,
            [("content-type", "application/json")],
            r#"{"records":[{"customer":"Dana Whitfield","note":"wrong-format"}]}"#,
        )
            .into_response(),
    }
}

fn pii_echo(format: Format) -> Response {
    let message = "Dana Whitfield (dana.whitfield@example.com), +15550100188, 12 Elm St";
    let detail = "java.lang.NullPointerException at com.vendor.internal.Mapper";
    let (content_type, body) = match format {
        Format::Json => (
            "application/json",
            serde_json::json!({ "code": "PROCESSING-ERROR", "message": message, "detail": detail })
                .to_string(),
        ),
        Format::Xml => (
            "text/xml; charset=utf-8",
            format!(
                "<?xml version=\"1.0\"?><soap:Envelope xmlns:soap=\"http://www.w3.org/2003/05/soap-envelope\">\
                 <soap:Body><soap:Fault><soap:Code><soap:Value>soap:Receiver</soap:Value></soap:Code>\
                 <soap:Reason><soap:Text xml:lang=\"en\">{message}</soap:Text></soap:Reason>\
                 <soap:Detail><Trace>{detail}</Trace></soap:Detail></soap:Fault></soap:Body></soap:Envelope>"
            ),
        ),
        Format::Delimited => ("text/plain", format!("{message}\n{detail}")),
    };
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        [("content-type", content_type)],
        body,
    )
        .into_response()
}

/// A loopback port that refuses connections while the socket lives: bound, so
/// nothing else can take it (a port bound and given back can be taken by any
/// process at once), but never listening, so a connection is reset at once.
pub fn refusing_port() -> std::io::Result<(socket2::Socket, SocketAddr)> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    socket.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())?;
    let addr = socket
        .local_addr()?
        .as_socket()
        .ok_or_else(|| std::io::Error::other("not an IP socket"))?;
    Ok((socket, addr))
}

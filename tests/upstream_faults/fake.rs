//! The fake upstreams of the fault matrix: each kind's API on wiremock (and a
//! healthy token endpoint for REST), reached through a [`Front`] that can
//! also reset or refuse connections, and the bridge config for each kind.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::common::config::{BridgeConfig, Dealership, Token, Upstream, quoted};
use super::common::leads::leads;
use super::common::{INVENTORY_PATH, count, fixture, inventory_ok, rest};
use super::{Fault, Kind, SINGLE_ATTEMPT, TIMEOUT, mount_tokens};

const SOAP_PATH: &str = "/serviceapi.asmx";
const FEED_PATH: &str = "/exports/inventory.csv";
const INTAKE_PATH: &str = "/adf/intake";

/// [`TIMEOUT`] as the config writes it.
fn timeout_text() -> String {
    format!("{}s", TIMEOUT.as_secs())
}

/// `upstream` with [`TIMEOUT`] and [`SINGLE_ATTEMPT`].
pub fn single_attempt(upstream: Upstream) -> Upstream {
    upstream.timeout(&timeout_text()).resilience(SINGLE_ATTEMPT)
}

impl Kind {
    /// The path of the API the fault sits on.
    pub fn api_path(self) -> &'static str {
        match self {
            Self::Rest => INVENTORY_PATH,
            Self::Soap => SOAP_PATH,
            Self::FeedCold | Self::FeedWarm => FEED_PATH,
            Self::Adf => INTAKE_PATH,
        }
    }

    fn good_answer(self) -> ResponseTemplate {
        match self {
            Self::Rest => inventory_ok(),
            Self::Soap => xml(200, &fixture("opentrack/closed-repair-orders-20261113.xml")),
            Self::FeedCold | Self::FeedWarm => csv(fixture("feed/homenet-inventory.csv")),
            Self::Adf => ResponseTemplate::new(200)
                .set_body_json(json!({ "success": true, "leadId": "crm-7" })),
        }
    }

    /// The answer that has `fault` (`None` when the fault is in the connection).
    pub fn faulty_answer(self, fault: Fault) -> Option<ResponseTemplate> {
        Some(match fault {
            Fault::Status {
                status,
                retry_after,
                body,
            } => {
                let reply = ResponseTemplate::new(status).set_body_raw(body, "text/plain");
                match retry_after {
                    Some(seconds) => reply.insert_header("Retry-After", seconds),
                    None => reply,
                }
            }
            // Long past the timeout, so that the timeout fires first on any machine.
            Fault::Slow => self.good_answer().set_delay(TIMEOUT + Duration::from_secs(8)),
            Fault::CutOff => match self {
                Self::Rest | Self::Adf => ResponseTemplate::new(200).set_body_raw(
                    r#"{"summary":{"totalCount":1},"results":[{"vin":"5NMCDKFR3SH382627","customer":"Dana Whitfield","note":"cut-off"#,
                    "application/json",
                ),
                Self::Soap => xml(
                    200,
                    r#"<?xml version="1.0"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><GetClosedRepairOrdersResponse><RepairOrder><CustomerName>WHITFIELD, DANA cut-off"#,
                ),
                // The feed's header row, cut off before its VIN column and any row.
                Self::FeedCold | Self::FeedWarm => {
                    csv("DealerID,Type,Stock,Dana Whitfield cut-off".to_owned())
                }
            },
            Fault::HtmlPage => ResponseTemplate::new(200).set_body_raw(
                "<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>Down for maintenance</h1><p>nginx/1.25.3</p></body></html>",
                "text/html",
            ),
            Fault::PiiEcho => {
                let echo: Value =
                    serde_json::from_str(&fixture("cdk/errors/pii-echo-500.json")).unwrap();
                let (message, detail) = (
                    echo["message"].as_str().unwrap(),
                    echo["detail"].as_str().unwrap(),
                );
                match self {
                    Self::Rest | Self::Adf => ResponseTemplate::new(500).set_body_json(echo.clone()),
                    Self::Soap => xml(500, &soap_receiver_fault(message, detail)),
                    Self::FeedCold | Self::FeedWarm => ResponseTemplate::new(500)
                        .set_body_raw(format!("PROCESSING-ERROR {message}\n{detail}"), "text/plain"),
                }
            }
            Fault::Refused | Fault::Reset => return None,
        })
    }
}

fn xml(status: u16, body: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.to_owned(), "text/xml; charset=utf-8")
}

fn csv(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/csv; charset=utf-8")
}

/// A SOAP 1.2 fault blaming the server, its reason and detail echoing `message` and `detail`.
fn soap_receiver_fault(message: &str, detail: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><soap:Fault><soap:Code><soap:Value>soap:Receiver</soap:Value><soap:Subcode><soap:Value>PROCESSING-ERROR</soap:Value></soap:Subcode></soap:Code><soap:Reason><soap:Text xml:lang="en">{message}</soap:Text></soap:Reason><soap:Detail><Trace>{detail}</Trace></soap:Detail></soap:Fault></soap:Body></soap:Envelope>"#
    )
}

// ---------------------------------------------------------------------------
// The upstream: wiremock behind a front that can reset or refuse connections
// ---------------------------------------------------------------------------

/// An answer the test can switch while the bridge runs.
#[derive(Clone)]
struct Switch(Arc<Mutex<ResponseTemplate>>);

impl Respond for Switch {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        self.0.lock().unwrap().clone()
    }
}

/// The upstream's address as the bridge knows it: a loopback listener that
/// passes connections through to wiremock, resets them once the request is
/// in, or is closed so that connecting is refused.
struct Front {
    addr: SocketAddr,
    reset: Arc<Mutex<bool>>,
    /// Cancelled to stop accepting: the listener closes.
    closed: CancellationToken,
    /// Cancelled to cut every passed-through connection (pooled ones too).
    cut: Arc<Mutex<CancellationToken>>,
}

impl Front {
    async fn start(backend: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let front = Self {
            addr: listener.local_addr().unwrap(),
            reset: Arc::default(),
            closed: CancellationToken::new(),
            cut: Arc::default(),
        };
        let (reset, closed, cut) = (front.reset.clone(), front.closed.clone(), front.cut.clone());
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    () = closed.cancelled() => return,
                    accepted = listener.accept() => accepted.unwrap().0,
                };
                let reset = *reset.lock().unwrap();
                let cut = cut.lock().unwrap().clone();
                tokio::spawn(pass_or_reset(stream, backend, reset, cut));
            }
        });
        front
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections from now on are reset; open ones are cut.
    fn reset(&self) {
        *self.reset.lock().unwrap() = true;
        self.cut_open_connections();
    }

    /// Connecting is refused from now on; open connections are cut.
    fn refuse(&self) {
        self.closed.cancel();
        self.cut_open_connections();
    }

    fn cut_open_connections(&self) {
        let mut cut = self.cut.lock().unwrap();
        cut.cancel();
        *cut = CancellationToken::new();
    }
}

async fn pass_or_reset(
    mut stream: TcpStream,
    backend: SocketAddr,
    reset: bool,
    cut: CancellationToken,
) {
    if reset {
        // Wait for the request, then close with RST instead of answering.
        let mut request = [0u8; 4096];
        let _ = stream.read(&mut request).await;
        stream.set_zero_linger().unwrap();
        return;
    }
    let Ok(mut upstream) = TcpStream::connect(backend).await else {
        return;
    };
    tokio::select! {
        () = cut.cancelled() => {}
        _ = tokio::io::copy_bidirectional(&mut stream, &mut upstream) => {}
    }
}

/// One kind's fake upstream: its API (and for REST a healthy token endpoint)
/// on wiremock, reached through a [`Front`].
pub struct FakeUpstream {
    pub kind: Kind,
    server: MockServer,
    answer: Switch,
    front: Front,
}

impl FakeUpstream {
    /// Answers well until [`Self::break_with`].
    pub async fn start(kind: Kind) -> Self {
        let server = MockServer::start().await;
        if kind == Kind::Rest {
            mount_tokens(&server, 1..).await;
        }
        let answer = Switch(Arc::new(Mutex::new(kind.good_answer())));
        Mock::given(path(kind.api_path()))
            .respond_with(answer.clone())
            .named("the faulty API")
            .mount(&server)
            .await;
        let front = Front::start(*server.address()).await;
        Self {
            kind,
            server,
            answer,
            front,
        }
    }

    pub fn break_with(&self, fault: Fault) {
        match (self.kind.faulty_answer(fault), fault) {
            (Some(answer), _) => *self.answer.0.lock().unwrap() = answer,
            (None, Fault::Reset) => self.front.reset(),
            (None, _) => self.front.refuse(),
        }
    }

    /// Requests that reached the API (not those reset or refused at the front).
    pub async fn api_requests(&self) -> usize {
        count(&self.server, self.kind.api_path()).await
    }

    /// Where the bridge reaches the API, and where wiremock listens.
    pub fn addresses(&self) -> [String; 2] {
        [
            self.front.addr.to_string(),
            self.server.address().to_string(),
        ]
    }

    /// The bridge's config for this kind.
    pub fn config(&self) -> String {
        let front = self.front.url();
        match self.kind {
            // Call deadlines far above the upstream's timeout: whichever fires
            // shows in the answer's message, so only the timeout may.
            Kind::Rest => rest(&self.server.uri())
                .call_timeout("30s")
                .no_cache()
                .edit_upstream("cdk", |u| {
                    single_attempt(u).set("base_url", quoted(&format!("{front}/cdk")))
                })
                .render(),
            Kind::Soap => BridgeConfig::new()
                .call_timeout("30s")
                .no_cache()
                .dealership(Dealership::acme().route("repair_orders", "ot"))
                .upstream(
                    "ot",
                    single_attempt(Upstream::opentrack(&front)),
                )
                .token(Token::new("acme", "acme-token", &["acme"], &["amcp:service:read"]))
                .render(),
            // A cold feed's call may wait for the start-up poll and then poll
            // itself: a call deadline above both timeouts.
            Kind::FeedCold | Kind::FeedWarm => BridgeConfig::new()
                .call_timeout("30s")
                .no_cache()
                .dealership(Dealership::acme().route("inventory", "feed"))
                .upstream(
                    "feed",
                    single_attempt(Upstream::feed(&format!("{front}{FEED_PATH}"), "homenet-csv"))
                        // A cold feed is read by the call; a warm one polls every second.
                        .set("refresh_interval", if self.kind == Kind::FeedCold { r#""1h""# } else { r#""1s""# }),
                )
                .token(Token::new("acme", "acme-token", &["acme"], &["amcp:inventory:read"]))
                .render(),
            Kind::Adf => leads(&format!("{front}{INTAKE_PATH}"))
                // The intake's timeout as every kind's; a lease longer than an attempt.
                .edit_upstream("crm", |u| u.timeout(&timeout_text()))
                .section(
                    "leads",
                    r#"delivery = { max_attempts = 2, base_delay = "50ms", max_delay = "400ms", lease = "5s" }"#,
                )
                .render(),
        }
    }
}

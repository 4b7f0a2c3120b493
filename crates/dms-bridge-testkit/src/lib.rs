//! Mock dealership upstreams on loopback, for the bridge's demo, tests,
//! examples and benchmarks: a CDK/Fortellis-shaped API, a dealer inventory
//! feed (CSV and XML), a CRM's ADF HTTP intake and mailbox, an Activix-shaped
//! CRM API, Black Book,
//! J.D. Power, Xtime, Tekion, OpenTrack, Reynolds & Reynolds RCI and a webhook
//! receiver, served from the fixtures in the
//! repository's `wiremock-fixtures/`;
//! and a demo OAuth 2.1 authorization server ([`oauth`]) that issues the
//! bridge's access tokens. That one is started on its own
//! ([`oauth::DemoAuthServer::start`]), not by [`start_mocks`]: its tokens'
//! audience is the bridge's MCP endpoint, which only the caller knows.
//!
//! The crate does not depend on the bridge. Where a mock has to read what the
//! bridge sends (ADF leads, SOAP requests) it does so with its own strict
//! reader ([`xml`]), so a bug in the bridge's parsers cannot hide itself by
//! being on both sides of the wire.

/// A file of the repository's `wiremock-fixtures/`, compiled in. Found from this
/// crate's manifest, so the fixtures stay where the bridge's tests read them too.
macro_rules! fixture {
    ($path:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../wiremock-fixtures/",
            $path
        ))
    };
}

pub mod http;
pub mod mock_activix;
pub mod mock_blackbook;
pub mod mock_cdk;
mod mock_cdk_drive;
pub mod mock_crm;
pub mod mock_feed;
pub mod mock_jdpower;
pub mod mock_opentrack;
pub mod mock_reynolds;
pub mod mock_smtp;
pub mod mock_tekion;
pub mod mock_webhooks;
pub mod mock_xtime;
pub mod oauth;
mod xml;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The demo CRM's intake token for demo-cdk and its signing key.
pub const CRM_TOKEN: &str = "demo-crm-token";
pub const CRM_SIGNING_KEY: &str = "demo-crm-signing-key";
/// The demo webhook endpoint's signing secret (Standard Webhooks, 32 bytes).
pub const WEBHOOK_SECRET: &str = "whsec_ZG1zLWJyaWRnZS1kZW1vLXdlYmhvb2sta2V5LTAwMDE=";

/// The "today" of the repair-order fixtures (`scripts/gen_repair_orders.py`).
const FIXTURE_TODAY: Option<chrono::NaiveDate> = chrono::NaiveDate::from_ymd_opt(2026, 11, 17);

/// Days from the fixtures' "today" to the real one: the mocks move the fixtures'
/// dates by this much so their orders are always recent.
///
/// "Today" is the date in Chicago, where the demo's service departments
/// (demo-cdk, demo-tekion) are: the bridge reads repair-order date ranges in
/// the dealership's zone, and from midnight UTC until midnight in Chicago the
/// UTC date would put the newest order on a day that has not come there yet.
fn days_since_fixtures() -> i64 {
    FIXTURE_TODAY.map_or(0, |f| (demo_now().date() - f).num_days())
}

/// The wall-clock time in Chicago, where the demo's service departments are.
fn demo_now() -> chrono::NaiveDateTime {
    chrono::Utc::now()
        .with_timezone(&chrono_tz::America::Chicago)
        .naive_local()
}

/// Mock upstreams running on loopback.
pub struct MockUpstreams {
    pub cdk_url: String,
    /// The CDK mock: its price drops are pushed as events once told where.
    pub cdk: mock_cdk::MockCdk,
    pub feed_url: String,
    pub feed: mock_feed::MockFeed,
    /// The CRM's ADF HTTP intake (demo-cdk's leads); also serves `/smtp/received`.
    pub crm_url: String,
    pub crm: mock_crm::MockCrm,
    /// An Activix-shaped CRM API (demo-reynolds' leads, read back).
    pub activix_url: String,
    pub activix: mock_activix::MockActivix,
    /// The CRM's ADF mailbox (demo-feed's leads).
    pub smtp: Arc<mock_smtp::MockSmtp>,
    /// A Black Book-shaped valuation API (most dealerships' trade-in values).
    pub blackbook_url: String,
    /// A J.D. Power-shaped valuation API (the other dealerships' trade-in values).
    pub jdpower_url: String,
    /// An Xtime-shaped service scheduler (demo-cdk's service department).
    pub xtime_url: String,
    /// A Tekion-shaped DMS (demo-tekion's inventory and repair orders).
    pub tekion_url: String,
    /// A Dealertrack OpenTrack-shaped SOAP service (demo-feed's repair orders,
    /// demo-dealertrack's inventory and repair orders).
    pub opentrack_url: String,
    /// A Reynolds & Reynolds RCI-shaped SOAP/STAR service (demo-reynolds').
    pub reynolds_url: String,
    /// A webhook receiver (`POST /webhooks`, `GET /webhooks/deliveries`).
    pub webhook_url: String,
    pub webhooks: mock_webhooks::MockWebhooks,
}

impl MockUpstreams {
    /// Where each mock listens, by the name the demo's config template gives it
    /// (`{cdk_url}` … `{smtp_port}` in the bridge's `demo.toml`).
    pub fn addresses(&self) -> [(&'static str, String); 12] {
        [
            ("activix_url", self.activix_url.clone()),
            ("cdk_url", self.cdk_url.clone()),
            ("feed_url", self.feed_url.clone()),
            ("crm_url", self.crm_url.clone()),
            ("blackbook_url", self.blackbook_url.clone()),
            ("jdpower_url", self.jdpower_url.clone()),
            ("xtime_url", self.xtime_url.clone()),
            ("tekion_url", self.tekion_url.clone()),
            ("opentrack_url", self.opentrack_url.clone()),
            ("reynolds_url", self.reynolds_url.clone()),
            ("smtp_port", self.smtp.addr().port().to_string()),
            ("webhook_url", self.webhook_url.clone()),
        ]
    }
}

/// Starts the mock upstreams on ephemeral loopback ports.
pub async fn start_mocks(
    cdk_latency: Duration,
    cancel: &CancellationToken,
) -> std::io::Result<MockUpstreams> {
    let feed = mock_feed::MockFeed::new();
    let cdk = mock_cdk::MockCdk::new(cdk_latency);
    let cdk_url = serve(cdk.router(), cancel.child_token()).await?;
    let feed_url = serve(feed.router(), cancel.child_token()).await?;
    let crm = mock_crm::MockCrm::new(
        BTreeMap::from([("demo-cdk".to_owned(), CRM_TOKEN.to_owned())]),
        Some(CRM_SIGNING_KEY.to_owned()),
    );
    let smtp = Arc::new(mock_smtp::MockSmtp::start(0).await?);
    let inbox = smtp.clone();
    let router = crm.router().route(
        "/smtp/received",
        axum::routing::get(move || {
            let inbox = inbox.clone();
            async move { axum::Json(serde_json::json!({ "messages": inbox.messages() })) }
        }),
    );
    let crm_url = serve(router, cancel.child_token()).await?;
    let activix = mock_activix::MockActivix::new();
    let activix_url = serve(activix.router(), cancel.child_token()).await?;
    let blackbook_url = serve(mock_blackbook::router(), cancel.child_token()).await?;
    let jdpower_url = serve(mock_jdpower::router(), cancel.child_token()).await?;
    let xtime_url = serve(mock_xtime::router(), cancel.child_token()).await?;
    let tekion_url = serve(mock_tekion::router(), cancel.child_token()).await?;
    let opentrack_url = serve(mock_opentrack::router(), cancel.child_token()).await?;
    let reynolds_url = serve(mock_reynolds::router(), cancel.child_token()).await?;
    let webhooks = mock_webhooks::MockWebhooks::new(WEBHOOK_SECRET).ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "bad WEBHOOK_SECRET")
    })?;
    let webhook_url = serve(webhooks.router(), cancel.child_token()).await?;
    Ok(MockUpstreams {
        cdk_url,
        cdk,
        feed_url,
        feed,
        crm_url,
        crm,
        activix_url,
        activix,
        smtp,
        blackbook_url,
        jdpower_url,
        xtime_url,
        tekion_url,
        opentrack_url,
        reynolds_url,
        webhook_url,
        webhooks,
    })
}

async fn serve(router: axum::Router, cancel: CancellationToken) -> std::io::Result<String> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let server = axum::serve(listener, router)
            .with_graceful_shutdown(async move { cancel.cancelled().await });
        if let Err(e) = server.await {
            tracing::error!(error = %e, "Mock upstream stopped.");
        }
    });
    Ok(format!("http://{addr}"))
}

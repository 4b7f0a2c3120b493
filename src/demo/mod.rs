//! `dms-bridge demo`: the whole bridge on one machine. Mock upstreams (a
//! CDK/Fortellis-shaped API and a dealer inventory feed) are served on loopback
//! from the same fixtures the tests use, and the bridge is configured from the
//! embedded `demo.toml`.

pub mod mock_blackbook;
pub mod mock_cdk;
mod mock_cdk_drive;
pub mod mock_crm;
pub mod mock_feed;
pub mod mock_opentrack;
pub mod mock_smtp;
pub mod mock_tekion;
pub mod mock_xtime;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ConfigErrors, from_toml_str};

/// The demo's config template; see [`config`].
pub const TEMPLATE: &str = include_str!("demo.toml");

/// The demo CRM's intake token for demo-cdk and its signing key.
pub const CRM_TOKEN: &str = "demo-crm-token";
pub const CRM_SIGNING_KEY: &str = "demo-crm-signing-key";

/// The "today" of the repair-order fixtures (`scripts/gen_repair_orders.py`).
const FIXTURE_TODAY: Option<chrono::NaiveDate> = chrono::NaiveDate::from_ymd_opt(2026, 11, 17);

/// Days from the fixtures' "today" to the real one: the mocks move the fixtures'
/// dates by this much so their orders are always recent.
fn days_since_fixtures() -> i64 {
    FIXTURE_TODAY.map_or(0, |f| (chrono::Utc::now().date_naive() - f).num_days())
}

/// Mock upstreams running on loopback.
pub struct MockUpstreams {
    pub cdk_url: String,
    pub feed_url: String,
    pub feed: mock_feed::MockFeed,
    /// The CRM's ADF HTTP intake (demo-cdk's leads); also serves `/smtp/received`.
    pub crm_url: String,
    pub crm: mock_crm::MockCrm,
    /// The CRM's ADF mailbox (demo-feed's leads).
    pub smtp: Arc<mock_smtp::MockSmtp>,
    /// A Black Book-shaped valuation API (both dealerships' trade-in values).
    pub blackbook_url: String,
    /// An Xtime-shaped service scheduler (demo-cdk's service department).
    pub xtime_url: String,
    /// A Tekion-shaped DMS (demo-tekion's repair orders).
    pub tekion_url: String,
    /// A Dealertrack OpenTrack-shaped SOAP service (demo-feed's repair orders).
    pub opentrack_url: String,
}

/// Starts the mock upstreams on ephemeral loopback ports.
pub async fn start_mocks(
    cdk_latency: Duration,
    cancel: &CancellationToken,
) -> std::io::Result<MockUpstreams> {
    let feed = mock_feed::MockFeed::new();
    let cdk_url = serve(mock_cdk::router(cdk_latency), cancel.child_token()).await?;
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
    let blackbook_url = serve(mock_blackbook::router(), cancel.child_token()).await?;
    let xtime_url = serve(mock_xtime::router(), cancel.child_token()).await?;
    let tekion_url = serve(mock_tekion::router(), cancel.child_token()).await?;
    let opentrack_url = serve(mock_opentrack::router(), cancel.child_token()).await?;
    Ok(MockUpstreams {
        cdk_url,
        feed_url,
        feed,
        crm_url,
        crm,
        smtp,
        blackbook_url,
        xtime_url,
        tekion_url,
        opentrack_url,
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

/// The demo config with the mock upstreams' URLs and the listen address filled in.
pub fn config(mocks: &MockUpstreams, listen: SocketAddr) -> Result<Config, ConfigErrors> {
    from_toml_str(&render(mocks, listen))
}

pub fn render(mocks: &MockUpstreams, listen: SocketAddr) -> String {
    TEMPLATE
        .replace("{cdk_url}", &mocks.cdk_url)
        .replace("{feed_url}", &mocks.feed_url)
        .replace("{crm_url}", &mocks.crm_url)
        .replace("{blackbook_url}", &mocks.blackbook_url)
        .replace("{xtime_url}", &mocks.xtime_url)
        .replace("{tekion_url}", &mocks.tekion_url)
        .replace("{opentrack_url}", &mocks.opentrack_url)
        .replace("{smtp_port}", &mocks.smtp.addr().port().to_string())
        .replace("{listen}", &listen.to_string())
}

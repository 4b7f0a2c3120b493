//! `dms-bridge demo`: the whole bridge on one machine. Mock upstreams (from
//! `dms-bridge-testkit`, with the cargo feature `demo`, on by default) are
//! served on loopback from the same fixtures the tests use, and the bridge is
//! configured from the embedded `demo.toml`. A production build
//! (`--no-default-features`) links no mocks and has no demo to run.

use std::net::SocketAddr;

#[cfg(feature = "demo")]
pub use with_mocks::run;
#[cfg(not(feature = "demo"))]
pub use without_mocks::run;

use crate::config::{Config, ConfigErrors, from_toml_str};

/// The demo's config template; see [`render`].
pub const TEMPLATE: &str = include_str!("demo.toml");

/// The demo config with the listen address and the upstreams' addresses filled
/// in: each `(name, value)` replaces `{name}` in [`TEMPLATE`]
/// (`MockUpstreams::addresses` of the testkit names them all).
pub fn render<'a>(
    addresses: impl IntoIterator<Item = (&'a str, String)>,
    listen: SocketAddr,
) -> String {
    let template = TEMPLATE.replace("{listen}", &listen.to_string());
    addresses
        .into_iter()
        .fold(template, |config, (name, value)| {
            config.replace(&format!("{{{name}}}"), &value)
        })
}

/// [`render`], parsed and validated.
pub fn config<'a>(
    addresses: impl IntoIterator<Item = (&'a str, String)>,
    listen: SocketAddr,
) -> Result<Config, ConfigErrors> {
    from_toml_str(&render(addresses, listen))
}

#[cfg(feature = "demo")]
mod with_mocks {
    use std::net::SocketAddr;
    use std::path::Path;
    use std::time::Duration;

    use anyhow::Context;
    use dms_bridge_testkit::{MockUpstreams, start_mocks};
    use tokio_util::sync::CancellationToken;

    use super::config;
    use crate::cli::serve;

    /// Starts the mocks and serves the bridge against them until interrupted.
    pub async fn run(
        listen: SocketAddr,
        stdio: bool,
        latency: Duration,
        no_cache: bool,
    ) -> anyhow::Result<()> {
        let cancel = CancellationToken::new();
        let mocks = start_mocks(latency, &cancel)
            .await
            .context("starting the mock upstreams")?;
        let mut cfg =
            config(mocks.addresses(), listen).map_err(|e| anyhow::anyhow!("demo config: {e}"))?;
        cfg.cache.enabled = !no_cache;
        // The demo's store (audit records, leads) lives in a temporary file, removed at exit:
        // on disk so a long demo or a load test does not grow the process's memory.
        let store = std::env::temp_dir().join(format!("dms-bridge-demo-{}.db", std::process::id()));
        cfg.store.url = format!("sqlite://{}", store.display());
        let banner = banner(&mocks, listen, stdio);
        let result = Box::pin(serve(&cfg, Path::new("."), stdio, Some(banner))).await;
        cancel.cancel();
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
        }
        result
    }

    fn banner(mocks: &MockUpstreams, listen: SocketAddr, stdio: bool) -> String {
        let endpoint = if stdio {
            "stdio (this process)".to_owned()
        } else {
            format!("http://{listen}/mcp")
        };
        let mut banner = format!(
            "dms-bridge demo\n\
             \n  MCP endpoint:   {endpoint}\
             \n  Dealerships:    demo-cdk    (CDK/Fortellis-shaped API at {cdk}/cdk: inventory, CDK Drive repair orders)\
             \n                  demo-feed   (HomeNet-style CSV feed at {feed}/feeds/homenet-inventory.csv, public inventory;\
             \n                               OpenTrack-shaped SOAP repair orders at {opentrack}/serviceapi.asmx)\
             \n                  demo-tekion (a service center: Tekion-shaped repair orders at {tekion})\
             \n  Service:        demo-cdk books through an Xtime-shaped scheduler at {xtime}\
             \n  Trade-ins:      a Black Book-shaped valuation API at {blackbook}\
             \n  Tokens:         demo-token-cdk   -> demo-cdk only\
             \n                  demo-token-group -> demo-cdk, demo-feed and demo-tekion\
             \n                  (no token)       -> demo-feed inventory, anonymously\
             \n  Lead delivery:  demo-cdk  -> CRM ADF HTTP intake {crm}/adf/demo-cdk (token + HMAC signature)\
             \n                  demo-feed -> CRM ADF mailbox smtp://{smtp}\
             \n  What the CRM received:  curl {crm}/adf/received   curl {crm}/smtp/received\n",
            cdk = mocks.cdk_url,
            feed = mocks.feed_url,
            crm = mocks.crm_url,
            smtp = mocks.smtp.addr(),
            opentrack = mocks.opentrack_url,
            tekion = mocks.tekion_url,
            xtime = mocks.xtime_url,
            blackbook = mocks.blackbook_url,
        );
        if !stdio {
            banner.push_str(&format!(
                "\n  Try:  npx @modelcontextprotocol/inspector --cli http://{listen}/mcp --transport http \\\
                 \n          --header \"Authorization: Bearer demo-token-group\" --method tools/list\n"
            ));
        }
        banner.push_str(&format!(
            "  Sell three units in the feed:  curl -X POST {}/feeds/advance\n",
            mocks.feed_url
        ));
        banner
    }
}

#[cfg(not(feature = "demo"))]
mod without_mocks {
    use std::net::SocketAddr;
    use std::time::Duration;

    /// The demo's mocks are not in this build: says so, and how to get them.
    /// Async like the demo build's `run`, so the caller is the same in both.
    pub async fn run(
        _listen: SocketAddr,
        _stdio: bool,
        _latency: Duration,
        _no_cache: bool,
    ) -> anyhow::Result<()> {
        anyhow::bail!(
            "this dms-bridge was built without the demo (cargo feature `demo`, on by \
             default); build it with default features to run `dms-bridge demo`"
        )
    }
}

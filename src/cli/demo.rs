//! `dms-bridge demo`: the whole bridge on one machine. Mock upstreams (from
//! `dms-bridge-testkit`, with the cargo feature `demo`, on by default) are
//! served on loopback from the same fixtures the tests use, and the bridge is
//! configured from the embedded `demo.toml`. A production build
//! (`--no-default-features`) links no mocks and has no demo to run.

use std::net::SocketAddr;

#[cfg(feature = "demo")]
pub use with_mocks::{run, started_mocks};
#[cfg(not(feature = "demo"))]
pub use without_mocks::{run, started_mocks};

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

/// Where `--print-config` points the demo's upstreams: loopback ports where
/// nothing answers until the operator puts their own systems' addresses in.
const PRINTED_ADDRESSES: [(&str, &str); 12] = [
    ("cdk_url", "http://127.0.0.1:9101"),
    ("feed_url", "http://127.0.0.1:9102"),
    ("crm_url", "http://127.0.0.1:9103"),
    ("blackbook_url", "http://127.0.0.1:9104"),
    ("xtime_url", "http://127.0.0.1:9105"),
    ("tekion_url", "http://127.0.0.1:9106"),
    ("opentrack_url", "http://127.0.0.1:9107"),
    ("smtp_port", "2525"),
    ("webhook_url", "http://127.0.0.1:9108"),
    ("jdpower_url", "http://127.0.0.1:9109"),
    ("reynolds_url", "http://127.0.0.1:9110"),
    ("activix_url", "http://127.0.0.1:9111"),
];

/// `demo --print-config`: the demo's config as a file to start from. It
/// passes `dms-bridge check` as it is; its upstreams are loopback addresses
/// to replace with the dealer's systems, its store a SQLite file beside it.
pub fn printed_config(listen: SocketAddr) -> String {
    let body = render(
        PRINTED_ADDRESSES.map(|(name, value)| (name, value.to_owned())),
        listen,
    );
    let body = body.replace(
        "url = \"sqlite::memory:\"",
        "url = \"sqlite://dms-bridge.db\"",
    );
    format!(
        "# dms-bridge config printed by `dms-bridge demo --print-config`: the demo's\n\
         # six dealerships, with their upstreams at loopback addresses where nothing\n\
         # answers yet. Point each [[upstreams]] entry at the dealer's own system,\n\
         # replace the demo tokens, then `dms-bridge check --config <this file>`.\n\
         # Every key: docs/reference/configuration.md.\n\n{}",
        body.lines()
            .skip_while(|l| l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
            .trim_start()
    )
}

/// The demo's `[oauth]` section: tokens from the demo authorization server
/// at `issuer`, for the MCP endpoint at `listen` (a loopback address).
/// Callers without a token keep the demo's anonymous inventory unless
/// `require_sign_in`.
pub fn oauth_section(issuer: &str, listen: SocketAddr, require_sign_in: bool) -> String {
    let allow_anonymous = !require_sign_in;
    format!(
        "\n[oauth]\n\
         allow_anonymous = {allow_anonymous}\n\
         resource = \"http://{listen}/mcp\"\n\
         issuer = \"{issuer}\"\n\
         dealerships_claim = \"amcp_dealerships\"\n\
         scopes_claim = \"scope\"\n\
         resource_name = \"dms-bridge demo\"\n"
    )
}

/// [`render`], parsed and validated.
pub fn config<'a>(
    addresses: impl IntoIterator<Item = (&'a str, String)>,
    listen: SocketAddr,
) -> Result<Config, ConfigErrors> {
    from_toml_str(&render(addresses, listen))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_config_checks_and_fills_every_address() {
        let printed = printed_config("127.0.0.1:8787".parse().unwrap());
        let config = from_toml_str(&printed).unwrap();
        assert_eq!(config.dealerships.len(), 6);
        assert_eq!(config.store.url, "sqlite://dms-bridge.db");
        for (name, _) in PRINTED_ADDRESSES {
            assert!(
                !printed.contains(&format!("{{{name}}}")),
                "{name} left unfilled"
            );
        }
        // The CRM mail subject's placeholder is the bridge's own, filled per lead.
        assert!(printed.contains("{lead_id}"));
    }
}

/// A VIN of the demo's inventory that its valuation mock values (for `verify --demo`).
pub const VALUED_VIN: &str = "5NMCDKFR3SH382627";

#[cfg(feature = "demo")]
mod with_mocks {
    use std::net::SocketAddr;
    use std::path::Path;
    use std::time::Duration;

    use anyhow::Context;
    use dms_bridge_testkit::oauth::{DemoAuthServer, DemoUser};
    use dms_bridge_testkit::{MockUpstreams, start_mocks};
    use tokio_util::sync::CancellationToken;

    use super::{oauth_section, render};
    use crate::cli::serve;
    use crate::config::from_toml_str;

    /// Starts the mocks and serves the bridge against them until interrupted.
    pub async fn run(
        listen: SocketAddr,
        stdio: bool,
        latency: Duration,
        no_cache: bool,
        require_sign_in: bool,
        store_url: Option<String>,
    ) -> anyhow::Result<()> {
        let cancel = CancellationToken::new();
        let mocks = start_mocks(latency, &cancel)
            .await
            .context("starting the mock upstreams")?;
        // The mock pushes its events to the bridge, once it knows where that is.
        if !stdio && listen.port() != 0 {
            mocks.cdk.push_events_to(&inbound_url(listen));
        }
        let sign_in = start_sign_in(listen, stdio, &cancel).await?;
        let mut toml = render(mocks.addresses(), listen);
        if let Some(auth) = &sign_in {
            toml.push_str(&oauth_section(auth.issuer(), listen, require_sign_in));
        } else if require_sign_in {
            anyhow::bail!(
                "--require-sign-in needs HTTP on a fixed loopback address (--listen 127.0.0.1:PORT)"
            );
        }
        let mut cfg = from_toml_str(&toml).map_err(|e| anyhow::anyhow!("demo config: {e}"))?;
        cfg.cache.enabled = !no_cache;
        // The demo's store (audit records, leads) lives in a temporary file, removed at exit:
        // on disk so a long demo or a load test does not grow the process's memory.
        let store = std::env::temp_dir().join(format!("dms-bridge-demo-{}.db", std::process::id()));
        cfg.store.url = store_url.unwrap_or_else(|| format!("sqlite://{}", store.display()));
        let mut banner = banner(&mocks, listen, stdio);
        banner.push_str(&sign_in_banner(
            sign_in.as_ref(),
            listen,
            stdio,
            require_sign_in,
        ));
        let result = Box::pin(serve(&cfg, Path::new("."), stdio, Some(banner), None)).await;
        cancel.cancel();
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
        }
        result
    }

    /// The demo's mock upstreams, started, and the demo's config pointing at
    /// them (for `verify --demo`); they stop when `cancel` is cancelled.
    pub async fn started_mocks(
        cancel: &CancellationToken,
    ) -> anyhow::Result<crate::config::Config> {
        let mocks = start_mocks(Duration::ZERO, cancel)
            .await
            .context("starting the mock upstreams")?;
        let toml = render(mocks.addresses(), SocketAddr::from(([127, 0, 0, 1], 0)));
        from_toml_str(&toml).map_err(|e| anyhow::anyhow!("demo config: {e}"))
    }

    /// The demo authorization server, so hosts can sign in with OAuth. Only
    /// over HTTP and on a known loopback port: a token names the endpoint's
    /// URL as its audience, which port 0 or a wildcard address cannot give.
    async fn start_sign_in(
        listen: SocketAddr,
        stdio: bool,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Option<DemoAuthServer>> {
        if stdio || listen.port() == 0 || !listen.ip().is_loopback() {
            return Ok(None);
        }
        let resource = format!("http://{listen}/mcp");
        let auth = DemoAuthServer::start(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            vec![resource],
            DemoUser::defaults(),
            cancel.child_token(),
        )
        .await
        .context("starting the demo authorization server")?;
        Ok(Some(auth))
    }

    fn sign_in_banner(
        auth: Option<&DemoAuthServer>,
        listen: SocketAddr,
        stdio: bool,
        require_sign_in: bool,
    ) -> String {
        let anonymous = if require_sign_in {
            "\n                  --require-sign-in: callers without a token get 401 (no anonymous inventory)."
        } else {
            "\n                  Hosts that sign in only after a 401: run with --require-sign-in."
        };
        match auth {
            Some(auth) => format!(
                "  Sign-in (OAuth 2.1): authorization server {issuer}; consent is automatic.\
                 \n                  Users: demo-group (the default: all six dealerships), demo-cdk\
                 \n                  (login_hint=demo-cdk). Try: claude mcp add --transport http dealerships http://{listen}/mcp{anonymous}\n",
                issuer = auth.issuer()
            ),
            None if stdio => String::new(),
            None => "  Sign-in (OAuth 2.1): off; the demo signs in only on a fixed loopback address (--listen 127.0.0.1:PORT).\n".to_owned(),
        }
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
             \n                  demo-tekion (a service center with a used lot: Tekion-shaped inventory and repair orders at {tekion})\
             \n                  demo-reynolds (Reynolds RCI-shaped STAR/SOAP inventory and repair orders at {reynolds})\
             \n                  demo-dealertrack (OpenTrack-shaped SOAP inventory and repair orders at {opentrack})\
             \n                  demo-xmlfeed (Meta automotive XML feed at {feed}/feeds/meta-automotive-inventory.xml, public inventory)\
             \n  Service:        demo-cdk books through an Xtime-shaped scheduler at {xtime}\
             \n  Trade-ins:      a Black Book-shaped valuation API at {blackbook}; J.D. Power-shaped at {jdpower}\
             \n  Tokens:         demo-token-cdk   -> demo-cdk only\
             \n                  demo-token-group -> all six dealerships\
             \n                  (no token)       -> demo-feed and demo-xmlfeed inventory, anonymously\
             \n  Lead delivery:  demo-cdk  -> CRM ADF HTTP intake {crm}/adf/demo-cdk (token + HMAC signature)\
             \n                  demo-feed, demo-dealertrack, demo-xmlfeed -> CRM ADF mailbox smtp://{smtp}\
             \n                  demo-reynolds -> an Activix-shaped CRM API at {activix}, its answers read back\
             \n                  (move a lead on: curl -X POST {activix}/admin/leads/<crm id>/advance)\
             \n  What the CRM received:  curl {crm}/adf/received   curl {crm}/smtp/received\
             \n  Webhooks:       demo-cdk and demo-feed events -> {webhook}/webhooks (Standard Webhooks signatures)\
             \n  What the receiver got:  curl {webhook}/webhooks/deliveries\n",
            cdk = mocks.cdk_url,
            feed = mocks.feed_url,
            crm = mocks.crm_url,
            smtp = mocks.smtp.addr(),
            opentrack = mocks.opentrack_url,
            tekion = mocks.tekion_url,
            xtime = mocks.xtime_url,
            blackbook = mocks.blackbook_url,
            jdpower = mocks.jdpower_url,
            activix = mocks.activix_url,
            reynolds = mocks.reynolds_url,
            webhook = mocks.webhook_url,
        );
        if !stdio {
            banner.push_str(&format!(
                "  Status page:    http://{listen}/status  (operator token: demo-operator-token)\n"
            ));
            banner.push_str(&format!(
                "\n  Try (Node 22.19 or newer):  npx @modelcontextprotocol/inspector@2.12.0 --cli http://{listen}/mcp --transport http \\\
                 \n          --header \"Authorization: Bearer demo-token-group\" --method tools/list\n"
            ));
        }
        banner.push_str(&format!(
            "  Sell three units in the feed:  curl -X POST {}/feeds/advance\n",
            mocks.feed_url
        ));
        banner.push_str(&format!(
            "  Move a CDK repair order on:    curl -X POST {}/cdk/admin/repair-orders/advance\n",
            mocks.cdk_url
        ));
        if !stdio {
            banner.push_str(&format!(
                "  Drop a price at CDK, which pushes the event to {}:\
                 \n                  curl -X POST {}/cdk/admin/price-drop\n",
                inbound_url(listen),
                mocks.cdk_url
            ));
        }
        banner
    }

    /// Where the CDK mock pushes its events: the bridge's inbound endpoint for cdk-riverside.
    fn inbound_url(listen: SocketAddr) -> String {
        format!("http://{listen}/events/inbound/cdk-riverside")
    }
}

#[cfg(not(feature = "demo"))]
mod without_mocks {
    use std::net::SocketAddr;
    use std::time::Duration;

    const NO_DEMO: &str = "this dms-bridge was built without the demo (cargo feature `demo`, on by \
        default); build it with default features to run `dms-bridge demo`";

    /// The mocks are not in this build.
    pub async fn started_mocks(
        _cancel: &tokio_util::sync::CancellationToken,
    ) -> anyhow::Result<crate::config::Config> {
        anyhow::bail!(NO_DEMO)
    }

    /// The demo's mocks are not in this build: says so, and how to get them.
    /// Async like the demo build's `run`, so the caller is the same in both.
    pub async fn run(
        _listen: SocketAddr,
        _stdio: bool,
        _latency: Duration,
        _no_cache: bool,
        _require_sign_in: bool,
        _store_url: Option<String>,
    ) -> anyhow::Result<()> {
        anyhow::bail!(NO_DEMO)
    }
}

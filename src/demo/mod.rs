//! `dms-bridge demo`: the whole bridge on one machine. Mock upstreams (from
//! `dms-bridge-testkit`) are served on loopback from the same fixtures the tests
//! use, and the bridge is configured from the embedded `demo.toml`.

use std::net::SocketAddr;

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

//! Points one upstream of a config at other origins (the kit's proxies, or a
//! replayed fixture set) without touching anything else: each URL keeps its
//! path and query, only `scheme://host:port` changes.

use std::collections::BTreeMap;

use crate::config::{Config, UpstreamConfig};

/// Why an upstream cannot be rerouted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RerouteError {
    #[error("no upstream {0:?} in the config (upstreams: {1})")]
    Unknown(String, String),
    #[error("upstream {0:?} is an ADF e-mail intake (SMTP); only HTTP upstreams can be proxied")]
    NotHttp(String),
    #[error("upstreams.{0}.{1} is not an http(s) URL: {2:?}")]
    BadUrl(String, &'static str, String),
    #[error("no new origin given for {0}")]
    Unmapped(String),
}

/// The URL keys of one upstream, as `(key, url)` in the config's order.
pub fn urls(cfg: &Config, upstream: &str) -> Result<Vec<(&'static str, String)>, RerouteError> {
    let found = cfg
        .upstreams
        .get(upstream)
        .ok_or_else(|| unknown(cfg, upstream))?;
    Ok(match found {
        UpstreamConfig::Rest(r) => {
            let mut urls = vec![("base_url", r.base_url.clone())];
            urls.extend(r.token_url.clone().map(|t| ("token_url", t)));
            urls
        }
        UpstreamConfig::Soap(s) => vec![("base_url", s.base_url.clone())],
        UpstreamConfig::Feed(f) => vec![("url", f.url.clone())],
        UpstreamConfig::AdfHttp(h) => vec![("url", h.url.clone())],
        UpstreamConfig::AdfEmail(_) => return Err(RerouteError::NotHttp(upstream.to_owned())),
    })
}

fn unknown(cfg: &Config, upstream: &str) -> RerouteError {
    let known: Vec<&str> = cfg.upstreams.keys().map(String::as_str).collect();
    RerouteError::Unknown(upstream.to_owned(), known.join(", "))
}

/// The distinct origins (`scheme://host:port`) the upstream's URLs use, in order.
pub fn origins(cfg: &Config, upstream: &str) -> Result<Vec<String>, RerouteError> {
    let mut origins = Vec::new();
    for (key, url) in urls(cfg, upstream)? {
        let origin = origin(&url)
            .ok_or_else(|| RerouteError::BadUrl(upstream.to_owned(), key, url.clone()))?;
        if !origins.contains(&origin) {
            origins.push(origin);
        }
    }
    Ok(origins)
}

/// `https://api.example.com/v1` → `https://api.example.com:443`.
pub fn origin(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed.host_str()?;
    let port = parsed.port_or_known_default()?;
    Some(format!("{}://{host}:{port}", parsed.scheme()))
}

/// `url` with its origin replaced by `to` (`http://127.0.0.1:4000`), the
/// rest kept as written.
fn rebase(url: &str, to: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let rest_at = url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after_scheme + i);
    format!("{}{}", to.trim_end_matches('/'), &url[rest_at..])
}

/// Points each URL of `upstream` at the new origin `to` maps its origin to.
pub fn reroute(
    cfg: &mut Config,
    upstream: &str,
    to: &BTreeMap<String, String>,
) -> Result<(), RerouteError> {
    let moved = |url: &mut String, key: &'static str| -> Result<(), RerouteError> {
        let from = origin(url)
            .ok_or_else(|| RerouteError::BadUrl(upstream.to_owned(), key, url.clone()))?;
        let target = to.get(&from).ok_or(RerouteError::Unmapped(from))?;
        *url = rebase(url, target);
        Ok(())
    };
    match cfg.upstreams.get_mut(upstream) {
        None => Err(unknown(cfg, upstream)),
        Some(UpstreamConfig::Rest(r)) => {
            moved(&mut r.base_url, "base_url")?;
            r.token_url
                .as_mut()
                .map_or(Ok(()), |t| moved(t, "token_url"))
        }
        Some(UpstreamConfig::Soap(s)) => moved(&mut s.base_url, "base_url"),
        Some(UpstreamConfig::Feed(f)) => moved(&mut f.url, "url"),
        Some(UpstreamConfig::AdfHttp(h)) => moved(&mut h.url, "url"),
        Some(UpstreamConfig::AdfEmail(_)) => Err(RerouteError::NotHttp(upstream.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        crate::config::from_toml_str(
            r#"
[[dealerships]]
id = "d"
name = "D"
timezone = "America/Chicago"
address = { line1 = "1 Main St", city = "Austin", region = "TX", postal_code = "78701", country = "US" }

[upstreams.tk]
kind = "rest"
profile = "tekion"
base_url = "https://api.tekion.example/base"
token_url = "https://auth.tekion.example:8443/tokens?x=1"
[upstreams.ot]
kind = "soap"
profile = "opentrack"
base_url = "http://ot.example"
[upstreams.mail]
kind = "adf_email"
smtp_host = "mail.example"
from = "a@b.example"
to = ["c@d.example"]
"#,
        )
        .unwrap()
    }

    #[test]
    fn lists_and_moves_each_origin_keeping_paths() {
        let mut cfg = config();
        assert_eq!(
            origins(&cfg, "tk").unwrap(),
            [
                "https://api.tekion.example:443",
                "https://auth.tekion.example:8443"
            ]
        );
        let to = BTreeMap::from([
            (
                "https://api.tekion.example:443".to_owned(),
                "http://127.0.0.1:1".to_owned(),
            ),
            (
                "https://auth.tekion.example:8443".to_owned(),
                "http://127.0.0.1:2".to_owned(),
            ),
        ]);
        reroute(&mut cfg, "tk", &to).unwrap();
        let UpstreamConfig::Rest(r) = &cfg.upstreams["tk"] else {
            panic!()
        };
        assert_eq!(r.base_url, "http://127.0.0.1:1/base");
        assert_eq!(
            r.token_url.as_deref(),
            Some("http://127.0.0.1:2/tokens?x=1")
        );
        assert_eq!(origins(&cfg, "ot").unwrap(), ["http://ot.example:80"]);
        let mut cfg2 = config();
        reroute(
            &mut cfg2,
            "ot",
            &BTreeMap::from([(
                "http://ot.example:80".to_owned(),
                "http://127.0.0.1:3".to_owned(),
            )]),
        )
        .unwrap();
        let UpstreamConfig::Soap(s) = &cfg2.upstreams["ot"] else {
            panic!()
        };
        assert_eq!(s.base_url, "http://127.0.0.1:3");
    }

    #[test]
    fn refuses_what_it_cannot_proxy() {
        let mut cfg = config();
        assert!(matches!(
            origins(&cfg, "mail"),
            Err(RerouteError::NotHttp(_))
        ));
        assert!(matches!(
            origins(&cfg, "nope"),
            Err(RerouteError::Unknown(..))
        ));
        assert!(matches!(
            reroute(&mut cfg, "ot", &BTreeMap::new()),
            Err(RerouteError::Unmapped(_))
        ));
    }
}

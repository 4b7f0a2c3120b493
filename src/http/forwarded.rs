//! The client's address behind trusted proxies, for anonymous quotas.
//!
//! A proxy appends the address it got a request from to `X-Forwarded-For` (or
//! RFC 7239 `Forwarded: for=`). Only proxies listed in `server.trusted_proxies`
//! are believed: the header is read only when the TCP peer is one of them, and
//! the client is the right-most address in it that is not itself a trusted
//! proxy. Everything left of that was written by the client and is ignored.

use std::net::IpAddr;

use axum::http::HeaderMap;

use crate::config::{Cidr, ForwardedHeader, canonical_ip};

#[derive(Debug, Clone)]
pub struct ClientAddress {
    trusted: Vec<Cidr>,
    header: ForwardedHeader,
}

impl ClientAddress {
    /// Entries that do not parse are skipped (config validation reports them).
    pub fn new(trusted_proxies: &[String], header: ForwardedHeader) -> Self {
        Self {
            trusted: trusted_proxies
                .iter()
                .filter_map(|s| s.parse().ok())
                .collect(),
            header,
        }
    }

    fn is_trusted(&self, ip: IpAddr) -> bool {
        self.trusted.iter().any(|c| c.contains(ip))
    }

    /// The client's address for a request that came from `peer`.
    pub fn resolve(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical_ip(peer);
        if !self.is_trusted(peer) {
            return peer;
        }
        let hops = match self.header {
            ForwardedHeader::XForwardedFor => x_forwarded_for(headers),
            ForwardedHeader::Forwarded => forwarded(headers),
        };
        // Walk from the nearest hop outwards; stop at the first address no
        // trusted proxy vouches for. An unreadable entry ends the walk at the
        // last address that was vouched for.
        let mut client = peer;
        for hop in hops.into_iter().rev() {
            let Some(ip) = hop else {
                return client;
            };
            client = canonical_ip(ip);
            if !self.is_trusted(client) {
                return client;
            }
        }
        client
    }
}

/// Every `X-Forwarded-For` entry, in order, over all the header's lines.
fn x_forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|line| match line.to_str() {
            Ok(text) => text.split(',').map(node).collect::<Vec<_>>(),
            Err(_) => vec![None],
        })
        .collect()
}

/// Every `Forwarded` element's `for=` node, in order, over all the header's lines.
fn forwarded(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    headers
        .get_all("forwarded")
        .iter()
        .flat_map(|line| match line.to_str() {
            Ok(text) => split_unquoted(text, ',')
                .into_iter()
                .map(|element| {
                    split_unquoted(element, ';').into_iter().find_map(|pair| {
                        let (key, value) = pair.split_once('=')?;
                        key.trim()
                            .eq_ignore_ascii_case("for")
                            .then(|| node(value.trim().trim_matches('"')))
                    })?
                })
                .collect::<Vec<_>>(),
            Err(_) => vec![None],
        })
        .collect()
}

/// Splits on `sep` outside double quotes.
fn split_unquoted(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut quoted = false;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`, `[2001:db8::1]` or
/// `[2001:db8::1]:4711`; `unknown` and obfuscated names are `None`.
fn node(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    if let Ok(ip) = text.parse() {
        return Some(ip);
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (v6, _) = rest.split_once(']')?;
        return v6.parse().ok();
    }
    let (v4, port) = text.split_once(':')?;
    port.parse::<u16>().ok()?;
    v4.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn the_header_is_read_only_from_trusted_peers() {
        let xff = headers(&[("x-forwarded-for", "203.0.113.9")]);
        let none = ClientAddress::new(&[], ForwardedHeader::XForwardedFor);
        assert_eq!(none.resolve(ip("10.0.0.5"), &xff), ip("10.0.0.5"));
        let lb = ClientAddress::new(&["10.0.0.0/8".into()], ForwardedHeader::XForwardedFor);
        assert_eq!(lb.resolve(ip("192.0.2.1"), &xff), ip("192.0.2.1"));
        assert_eq!(lb.resolve(ip("10.0.0.5"), &xff), ip("203.0.113.9"));
        assert_eq!(lb.resolve(ip("::ffff:10.0.0.5"), &xff), ip("203.0.113.9"));
        // No header from a trusted peer: the peer itself.
        assert_eq!(
            lb.resolve(ip("10.0.0.5"), &HeaderMap::new()),
            ip("10.0.0.5")
        );
    }

    #[test]
    fn the_right_most_untrusted_address_wins() {
        let lb = ClientAddress::new(
            &["10.0.0.0/8".into(), "192.0.2.50".into()],
            ForwardedHeader::XForwardedFor,
        );
        // The client wrote 1.1.1.1 itself; the proxies appended the rest.
        let h = headers(&[
            ("x-forwarded-for", "1.1.1.1, 198.51.100.7"),
            ("x-forwarded-for", "192.0.2.50:8080, 10.1.2.3"),
        ]);
        assert_eq!(lb.resolve(ip("10.0.0.5"), &h), ip("198.51.100.7"));
        // Every hop trusted: the furthest one.
        let h = headers(&[("x-forwarded-for", "10.9.9.9, 10.1.2.3")]);
        assert_eq!(lb.resolve(ip("10.0.0.5"), &h), ip("10.9.9.9"));
        // An unreadable hop: the last vouched-for address.
        let h = headers(&[("x-forwarded-for", "198.51.100.7, garbage, 10.1.2.3")]);
        assert_eq!(lb.resolve(ip("10.0.0.5"), &h), ip("10.1.2.3"));
        // X-Forwarded-For mode ignores Forwarded.
        let h = headers(&[("forwarded", "for=198.51.100.7")]);
        assert_eq!(lb.resolve(ip("10.0.0.5"), &h), ip("10.0.0.5"));
    }

    #[test]
    fn forwarded_nodes_are_read_per_rfc_7239() {
        let lb = ClientAddress::new(&["10.0.0.0/8".into()], ForwardedHeader::Forwarded);
        let h = headers(&[(
            "forwarded",
            r#"for=1.1.1.1, For="[2001:db8:cafe::17]:4711";proto=https;by=10.0.0.1, for=10.2.3.4"#,
        )]);
        assert_eq!(lb.resolve(ip("10.0.0.5"), &h), ip("2001:db8:cafe::17"));
        let h = headers(&[("forwarded", "for=192.0.2.60:80;proto=http")]);
        assert_eq!(lb.resolve(ip("10.0.0.5"), &h), ip("192.0.2.60"));
        let h = headers(&[("forwarded", "for=unknown")]);
        assert_eq!(lb.resolve(ip("10.0.0.5"), &h), ip("10.0.0.5"));
        let h = headers(&[("forwarded", r#"for="_hidden", for=10.3.3.3"#)]);
        assert_eq!(lb.resolve(ip("10.0.0.5"), &h), ip("10.3.3.3"));
    }
}

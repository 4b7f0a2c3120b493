//! One way for every test to write a bridge config: dealerships, upstreams,
//! tokens and top-level sections, rendered as TOML. Values are raw TOML
//! (`r#""5s""#`, `"true"`, `"{ retries = { max = 0 } }"`) unless a helper
//! quotes them, so a builder call reads like the config it makes.
#![allow(dead_code)]

/// A TOML basic string: `"text"`.
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// An inline secret: `{ value = "text" }`.
pub fn secret(text: &str) -> String {
    format!("{{ value = {} }}", quoted(text))
}

/// An inline array of strings: `["a", "b"]`.
fn string_list(items: &[&str]) -> String {
    let items: Vec<String> = items.iter().map(|i| quoted(i)).collect();
    format!("[{}]", items.join(", "))
}

/// Replaces the one item `found` picks with `edit(item)`, in place.
fn edit_in<T: std::fmt::Debug>(
    items: &mut Vec<T>,
    found: impl Fn(&T) -> bool,
    edit: impl FnOnce(T) -> T,
) {
    let at = items
        .iter()
        .position(found)
        .unwrap_or_else(|| panic!("nothing to edit in {items:?}"));
    let item = items.remove(at);
    items.insert(at, edit(item));
}

/// `key = value` lines in order, then raw lines.
#[derive(Clone, Debug, Default)]
struct Table {
    entries: Vec<(String, String)>,
    lines: Vec<String>,
}

impl Table {
    fn set(&mut self, key: &str, value: String) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key.to_owned(), value)),
        }
    }

    fn unset(&mut self, key: &str) {
        self.entries.retain(|(k, _)| k != key);
    }

    fn render(&self, header: &str) -> String {
        let mut out = format!("{header}\n");
        for (key, value) in &self.entries {
            out += &format!("{key} = {value}\n");
        }
        for line in &self.lines {
            out += line;
            out.push('\n');
        }
        out
    }
}

/// Caller quotas no test reaches, for each `[rate_limits]` key a test leaves
/// unnamed. The product's defaults (1,200 a minute per token, burst 100, …)
/// refill while a test runs: a test making 121 calls passed on a slow machine
/// and was refused on one twice as fast. A test about quotas names the ones it
/// is about ([`BridgeConfig::quota`]) and gets exactly those.
pub const UNREACHABLE_QUOTAS: [(&str, &str); 3] = [
    (
        "per_token",
        r#"{ requests = 100000000, per = "1m", burst = 10000000 }"#,
    ),
    (
        "anonymous",
        r#"{ requests = 100000000, per = "1m", burst = 10000000 }"#,
    ),
    (
        "per_class",
        r#"{ read = { requests = 100000000, per = "1m", burst = 10000000 }, write = { requests = 100000000, per = "1m", burst = 10000000 } }"#,
    ),
];

/// An answer token budget no test reaches, unless the test names
/// `max_result_tokens`: these tests are about upstreams and read whole
/// inventories in one page of full records (the demo's own tests, at the
/// default budget, page them with `every_page`; `inventory_search.rs` is
/// about the budget).
pub const UNREACHABLE_ANSWER_BUDGET: &str = "max_result_tokens = 100000000";

/// A whole config. Sections render first (in the order first named), then
/// dealerships, upstreams, tokens and the raw tail.
#[derive(Clone, Debug, Default)]
pub struct BridgeConfig {
    sections: Vec<(String, Vec<String>)>,
    dealerships: Vec<Dealership>,
    upstreams: Vec<(String, Upstream)>,
    tokens: Vec<Token>,
    tail: Vec<String>,
}

impl BridgeConfig {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `line` to the top-level table `[name]` (`server`, `limits`, `cache`, …);
    /// a `key = value` line replaces an earlier one with the same key.
    pub fn section(mut self, name: &str, line: &str) -> Self {
        let key = |l: &str| l.split_once('=').map(|(k, _)| k.trim().to_owned());
        let Some(at) = self.sections.iter().position(|(n, _)| n == name) else {
            self.sections.push((name.to_owned(), vec![line.to_owned()]));
            return self;
        };
        let lines = &mut self.sections[at].1;
        match lines
            .iter_mut()
            .find(|l| key(l).is_some() && key(l) == key(line))
        {
            Some(same_key) => line.clone_into(same_key),
            None => lines.push(line.to_owned()),
        }
        self
    }

    /// `[limits] call_timeout`.
    pub fn call_timeout(self, timeout: &str) -> Self {
        self.section("limits", &format!("call_timeout = {}", quoted(timeout)))
    }

    /// `[cache] enabled = false`: every call reaches the upstream.
    pub fn no_cache(self) -> Self {
        self.section("cache", "enabled = false")
    }

    /// `[rate_limits]` `key = value`: a caller quota the test is about. Every
    /// caller quota a test leaves unnamed is one no test reaches (see
    /// [`UNREACHABLE_QUOTAS`]).
    pub fn quota(self, key: &str, value: &str) -> Self {
        self.section("rate_limits", &format!("{key} = {value}"))
    }

    /// Whether the top-level table `[name]` sets `key`.
    fn names(&self, name: &str, key: &str) -> bool {
        self.sections.iter().any(|(n, lines)| {
            n == name
                && lines
                    .iter()
                    .any(|l| l.split_once('=').is_some_and(|(k, _)| k.trim() == key))
        })
    }

    pub fn dealership(mut self, dealership: Dealership) -> Self {
        self.dealerships.push(dealership);
        self
    }

    pub fn upstream(mut self, id: &str, upstream: Upstream) -> Self {
        self.upstreams.push((id.to_owned(), upstream));
        self
    }

    pub fn token(mut self, token: Token) -> Self {
        self.tokens.push(token);
        self
    }

    /// Raw TOML after everything else (more tables, a `[store]`…).
    pub fn tail(mut self, toml: &str) -> Self {
        assert!(
            !toml.contains("[rate_limits]"),
            "name caller quotas with BridgeConfig::quota, not in a raw tail"
        );
        self.tail.push(toml.to_owned());
        self
    }

    pub fn edit_dealership(
        mut self,
        id: &str,
        edit: impl FnOnce(Dealership) -> Dealership,
    ) -> Self {
        edit_in(&mut self.dealerships, |d| d.id == id, edit);
        self
    }

    pub fn edit_upstream(mut self, id: &str, edit: impl FnOnce(Upstream) -> Upstream) -> Self {
        edit_in(&mut self.upstreams, |(i, _)| i == id, |(i, u)| (i, edit(u)));
        self
    }

    pub fn edit_token(mut self, name: &str, edit: impl FnOnce(Token) -> Token) -> Self {
        edit_in(&mut self.tokens, |t| t.name == name, edit);
        self
    }

    pub fn render(&self) -> String {
        let mut config = self.clone();
        for (key, value) in UNREACHABLE_QUOTAS {
            if !self.names("rate_limits", key) {
                config = config.quota(key, value);
            }
        }
        if !self.names("limits", "max_result_tokens") {
            config = config.section("limits", UNREACHABLE_ANSWER_BUDGET);
        }
        let mut parts: Vec<String> = config
            .sections
            .iter()
            .map(|(name, lines)| format!("[{name}]\n{}\n", lines.join("\n")))
            .collect();
        parts.extend(config.dealerships.iter().map(Dealership::render));
        parts.extend(
            config
                .upstreams
                .iter()
                .map(|(id, u)| u.table.render(&format!("[upstreams.{id}]"))),
        );
        parts.extend(config.tokens.iter().map(|t| t.table.render("[[tokens]]")));
        parts.extend(config.tail.iter().cloned());
        parts.join("\n")
    }
}

/// One `[[dealerships]]` entry.
#[derive(Clone, Debug)]
pub struct Dealership {
    id: String,
    table: Table,
    routes: Vec<(String, String)>,
}

impl Dealership {
    /// `address` is `[line1, city, region, postal_code]`, in the US.
    pub fn new(id: &str, name: &str, timezone: &str, address: [&str; 4]) -> Self {
        let [line1, city, region, postal_code] = address.map(quoted);
        let mut table = Table::default();
        table.set("id", quoted(id));
        table.set("name", quoted(name));
        table.set("timezone", quoted(timezone));
        table.set(
            "address",
            format!(
                "{{ line1 = {line1}, city = {city}, region = {region}, postal_code = {postal_code}, country = \"US\" }}"
            ),
        );
        Self {
            id: id.to_owned(),
            table,
            routes: Vec::new(),
        }
    }

    /// Acme Motors in Springfield, IL, on Central time.
    pub fn acme() -> Self {
        Self::new(
            "acme",
            "Acme Motors",
            "America/Chicago",
            ["1 Main St", "Springfield", "IL", "62701"],
        )
    }

    /// Other Motors in Albany, NY, on Eastern time.
    pub fn other() -> Self {
        Self::new(
            "other",
            "Other Motors",
            "America/New_York",
            ["2 Side St", "Albany", "NY", "12207"],
        )
    }

    /// Routes `domain` (`inventory`, `leads`, …) to the upstream `upstream`.
    pub fn route(mut self, domain: &str, upstream: &str) -> Self {
        match self.routes.iter_mut().find(|(d, _)| d == domain) {
            Some(route) => route.1 = upstream.to_owned(),
            None => self.routes.push((domain.to_owned(), upstream.to_owned())),
        }
        self
    }

    /// Sets `key` to the raw TOML `value`.
    pub fn set(mut self, key: &str, value: impl Into<String>) -> Self {
        self.table.set(key, value.into());
        self
    }

    fn render(&self) -> String {
        let mut table = self.table.clone();
        if !self.routes.is_empty() {
            let routes: Vec<String> = self
                .routes
                .iter()
                .map(|(d, u)| format!("{d} = {}", quoted(u)))
                .collect();
            table.set("routes", format!("{{ {} }}", routes.join(", ")));
        }
        table.render("[[dealerships]]")
    }
}

/// One `[upstreams.<id>]` table.
#[derive(Clone, Debug)]
pub struct Upstream {
    table: Table,
}

impl Upstream {
    pub fn new(kind: &str) -> Self {
        let mut table = Table::default();
        table.set("kind", quoted(kind));
        Self { table }
    }

    /// A REST upstream with a built-in (or file) `profile`.
    /// A REST upstream read through on every call, as the tests of reads,
    /// caching and resilience need (`inventory_sync = "off"`); tests of the
    /// inventory mirror set an interval.
    pub fn rest(profile: &str, base_url: &str) -> Self {
        Self::new("rest")
            .set("profile", quoted(profile))
            .set("base_url", quoted(base_url))
            .set("inventory_sync", quoted("off"))
    }

    /// A CDK/Fortellis-shaped REST upstream served by `server` (API under
    /// `/cdk`, OAuth2 token endpoint at `/oauth2/token`), with a 2s timeout.
    pub fn cdk(server: &str) -> Self {
        Self::rest("cdk-fortellis", &format!("{server}/cdk"))
            .set("token_url", quoted(&format!("{server}/oauth2/token")))
            .set("client_id", secret("id"))
            .set("client_secret", secret("secret"))
            .set("vars", r#"{ subscription_id = "sub-123" }"#)
            .timeout("2s")
    }

    /// An Xtime-shaped scheduler at `base_url` (token endpoint at
    /// `{base_url}/oauth2/token`, dealer `ACME01`), with a 2s timeout.
    pub fn xtime(base_url: &str) -> Self {
        Self::rest("xtime", base_url)
            .set("token_url", quoted(&format!("{base_url}/oauth2/token")))
            .set("client_id", secret("xt-id"))
            .set("client_secret", secret("xt-secret"))
            .set("secrets", r#"{ api_key = { value = "xt-key" } }"#)
            .set("vars", r#"{ dealer_code = "ACME01" }"#)
            .timeout("2s")
    }

    /// An inventory feed at `url` read with the built-in (or file) `mapping`.
    pub fn feed(url: &str, mapping: &str) -> Self {
        Self::new("feed")
            .set("url", quoted(url))
            .set("mapping", quoted(mapping))
    }

    /// A SOAP upstream with a built-in (or file) `profile`.
    pub fn soap(profile: &str, base_url: &str) -> Self {
        Self::new("soap")
            .set("profile", quoted(profile))
            .set("base_url", quoted(base_url))
    }

    /// An OpenTrack-shaped SOAP upstream at `base_url` (user `ot-user`, dealer
    /// `EC1`/`CN&7`), with a 2s timeout.
    pub fn opentrack(base_url: &str) -> Self {
        Self::soap("opentrack", base_url)
            .set("username", secret("ot-user"))
            .set("password", secret("s3cret&<pw>"))
            .set(
                "vars",
                r#"{ enterprise_code = "EC1", company_number = "CN&7" }"#,
            )
            .timeout("2s")
    }

    /// A CRM intake taking ADF documents by HTTP POST at `url`.
    pub fn adf_http(url: &str) -> Self {
        Self::new("adf_http").set("url", quoted(url))
    }

    /// Sets `key` to the raw TOML `value`.
    pub fn set(mut self, key: &str, value: impl Into<String>) -> Self {
        self.table.set(key, value.into());
        self
    }

    /// Leaves `key` to the product's default.
    pub fn unset(mut self, key: &str) -> Self {
        self.table.unset(key);
        self
    }

    pub fn timeout(self, timeout: &str) -> Self {
        self.set("timeout", quoted(timeout))
    }

    /// How often a feed is polled.
    pub fn refresh_interval(self, every: &str) -> Self {
        self.set("refresh_interval", quoted(every))
    }

    /// The upstream's `resilience` table, as inline TOML.
    pub fn resilience(self, resilience: &str) -> Self {
        self.set("resilience", resilience)
    }

    /// Raw TOML after the table's keys (may open further tables).
    pub fn line(mut self, toml: &str) -> Self {
        self.table.lines.push(toml.to_owned());
        self
    }
}

/// One `[[tokens]]` entry.
#[derive(Clone, Debug)]
pub struct Token {
    name: String,
    table: Table,
}

impl Token {
    pub fn new(name: &str, secret_value: &str, dealerships: &[&str], scopes: &[&str]) -> Self {
        let mut table = Table::default();
        table.set("name", quoted(name));
        table.set("secret", secret(secret_value));
        table.set("dealerships", string_list(dealerships));
        table.set("scopes", string_list(scopes));
        Self {
            name: name.to_owned(),
            table,
        }
    }

    /// Sets `key` to the raw TOML `value`.
    pub fn set(mut self, key: &str, value: impl Into<String>) -> Self {
        self.table.set(key, value.into());
        self
    }
}

//! Configuration: strict serde types, a pure [`Config::validate`], then
//! The runtime's `build` does the I/O (secrets, profile files, clients).
//!
//! Loading reports every problem at once, each with its path: structural
//! problems (unknown keys, wrong types) come from the JSON Schema derived from
//! these types, semantic ones (unknown time zone, dangling references) from
//! `validate`.

mod aap;
pub mod catalog;
mod cidr;
mod error;
mod events;
mod gateway;
mod inbound;
mod leads;
mod load;
pub mod locate;
mod mirror;
mod oauth;
mod privacy;
mod problems;
mod quotas;
pub mod reference;
mod rules;
mod secret;
mod soap;
mod status;
mod store;
mod tasks;
mod upstream_kinds;
mod validate;

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

pub use aap::AapConfig;
pub use cidr::{Cidr, canonical as canonical_ip};
pub use error::{ConfigError, ConfigErrors};
pub use events::{EventsConfig, WebhookConfig, webhook_dealerships, webhook_key};
pub use gateway::{
    BreakerConfig, CacheConfig, Rate, RateLimitsConfig, ResilienceConfig, RetryConfig, StoreConfig,
    ToolClass,
};
pub use inbound::{InboundEventsConfig, InboundSigning};
pub use leads::{AdfEmailConfig, AdfHttpConfig, DeliveryConfig, LeadsConfig, SmtpTls};
pub use load::{from_toml_str, load_file};
pub use mirror::{MirrorConfig, SyncInterval};
pub use oauth::{OAuthConfig, OAuthGrant};
pub use privacy::{EncryptionConfig, RetentionConfig, key_bytes, warnings as privacy_warnings};
pub use quotas::QuotasConfig;
pub use secret::{InlineSecret, SecretSource, resolve_secret};
pub use soap::SoapUpstreamConfig;
pub use status::StatusConfig;
pub use store::StoreDialect;
pub use tasks::TasksConfig;
pub use upstream_kinds::UpstreamKind;

use crate::model::Domain;
use crate::model::dealership::{Address, Geo, Hours, Phone};

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub server: ServerConfig,
    #[serde(default)]
    pub limits: LimitsConfig,
    #[serde(default)]
    pub cache: CacheConfig,
    #[serde(default)]
    pub rate_limits: RateLimitsConfig,
    /// Quotas shared by replicas through Redis; absent, each process keeps its own.
    #[serde(default)]
    pub quotas: Option<QuotasConfig>,
    #[serde(default)]
    pub store: StoreConfig,
    #[serde(default)]
    pub leads: LeadsConfig,
    /// Slow reads as MCP tasks the client polls.
    #[serde(default)]
    pub tasks: TasksConfig,
    /// The inventory mirror: staleness and the mass-removal guard.
    #[serde(default)]
    pub mirror: MirrorConfig,
    /// The dealerships (rooftops) this bridge serves.
    #[serde(default)]
    pub dealerships: Vec<DealershipConfig>,
    /// Upstream instances by id; dealerships route domains to them.
    #[serde(default)]
    pub upstreams: BTreeMap<String, UpstreamConfig>,
    /// Bearer tokens callers present.
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
    /// OAuth 2.1 sign-in (ChatGPT and claude.ai connectors, and any host
    /// that signs in); static tokens keep working beside it.
    #[serde(default)]
    pub oauth: Option<OAuthConfig>,
    /// The event log's retention.
    #[serde(default)]
    pub events: EventsConfig,
    /// Endpoints that get the dealerships' events as signed webhooks, by id.
    #[serde(default)]
    pub webhooks: BTreeMap<String, WebhookConfig>,
    /// The status page for people, behind an operator credential; absent, no page.
    #[serde(default)]
    pub status: Option<StatusConfig>,
    /// How long each kind of record (customer data above all) is kept.
    #[serde(default)]
    pub retention: RetentionConfig,
    /// The Auto Agent Protocol door's shared settings (`aap = true` per dealership enables it).
    #[serde(default)]
    pub aap: Option<AapConfig>,
}

/// The MCP endpoint and the HTTP server in front of it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address to listen on for Streamable HTTP.
    pub listen: String,
    /// Path of the MCP endpoint.
    pub path: String,
    /// `Host` header values accepted (DNS-rebinding guard). Add your public host name here.
    pub allowed_hosts: Vec<String>,
    /// `Origin` header values accepted from browsers (`http://localhost:*` matches any port).
    /// A request with another Origin gets 403; requests without one (non-browser clients) pass.
    pub allowed_origins: Vec<String>,
    /// Largest request body accepted, in bytes.
    pub max_request_bytes: usize,
    /// Key that signs pagination cursors. Without it a random key is made at start,
    /// and cursors do not survive a restart or move between replicas.
    pub cursor_secret: Option<SecretSource>,
    /// Time a new connection has to send its first request head, and a kept-alive
    /// connection to finish a head once its first byte arrived. Then it is closed.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub header_read_timeout: Duration,
    /// Time a request body has to arrive in full once its head is read; a late
    /// body gets 408 and the connection is closed.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub body_read_timeout: Duration,
    /// A kept-alive connection with no request in flight is closed after this.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub idle_timeout: Duration,
    /// Connections served at once. Lowered at start, with a warning, to fit the
    /// process's open-file limit.
    pub max_connections: usize,
    /// Connections over `max_connections` that still get `overflow_grace` to send a
    /// request head: `GET /healthz` and `/readyz` are answered, anything else gets
    /// 503 with `Retry-After`. Past this many, a connection is closed at once.
    pub overflow_connections: usize,
    /// Time an over-cap connection has to send its request head.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub overflow_grace: Duration,
    /// Proxies (IP addresses or CIDR blocks) whose `forwarded_header` names the
    /// client, for anonymous quotas. Empty: the header is never read.
    pub trusted_proxies: Vec<String>,
    /// Which header a trusted proxy names the client in.
    pub forwarded_header: ForwardedHeader,
    /// Which names `tools/list` shows. Calls by either name always work.
    pub tool_names: ToolNames,
    /// Whether clients of the `initialize` era (2025-11-25 and before) get a
    /// session: `stateful` is needed for their `resources/subscribe`.
    pub sessions: SessionMode,
}

/// Sessions for clients of the `initialize` era. 2026-07-28 clients are
/// served statelessly either way (they subscribe with `subscriptions/listen`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionMode {
    /// Every request stands alone: any replica answers any request, no
    /// affinity needed; `resources/subscribe` is not offered to these clients.
    #[default]
    Stateless,
    /// `initialize` opens a session (`Mcp-Session-Id`, held in this process's
    /// memory, with a `GET` stream): `resources/subscribe` and
    /// `notifications/resources/updated` work. Behind a load balancer, a
    /// session must stick to its replica.
    Stateful,
}

/// How tools are named in `tools/list`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolNames {
    /// `inventory_search`: letters, digits, `_` and `-` only, which every
    /// host accepts (Claude Desktop and claude.ai refuse a whole server over
    /// one name with a dot; OpenAI's API and Codex refuse dots too).
    #[default]
    HostSafe,
    /// `inventory.search`: AutomotiveMCP's canonical names, for agents that
    /// require them. Hosts that validate names strictly refuse these.
    Canonical,
}

/// The header a trusted proxy adds the client's address to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, …`
    #[serde(rename = "x-forwarded-for")]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=proxy1, …`
    #[serde(rename = "forwarded")]
    Forwarded,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8787".into(),
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: vec![
                "http://localhost:*".into(),
                "http://127.0.0.1:*".into(),
                "http://[::1]:*".into(),
            ],
            max_request_bytes: 1024 * 1024,
            cursor_secret: None,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1024,
            overflow_connections: 32,
            overflow_grace: Duration::from_secs(1),
            trusted_proxies: Vec::new(),
            forwarded_header: ForwardedHeader::XForwardedFor,
            tool_names: ToolNames::HostSafe,
            sessions: SessionMode::Stateless,
        }
    }
}

/// Limits applied to every call.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Page size when a caller gives no `limit`.
    pub default_limit: u32,
    /// Largest `limit` a caller may ask for.
    pub max_limit: u32,
    /// Deadline for one tool call, upstream calls included.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub call_timeout: Duration,
    /// Largest serialized result; bigger ones get `request.result_too_large`.
    pub max_result_bytes: usize,
    /// Most tokens one result may put in front of a model, estimated from
    /// above (`contract::tokens`): a list page stops short of it and its
    /// cursor goes on from there; any other result over it gets
    /// `request.result_too_large`. The default stays under the hosts' caps
    /// (Claude Code: 25,000).
    pub max_result_tokens: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            default_limit: 20,
            max_limit: 100,
            call_timeout: Duration::from_secs(30),
            max_result_bytes: 4 * 1024 * 1024,
            max_result_tokens: 20_000,
        }
    }
}

/// One dealership (rooftop).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DealershipConfig {
    /// Stable id callers pass as `dealership_id`.
    pub id: String,
    pub name: String,
    pub legal_name: Option<String>,
    pub address: Address,
    pub geo: Option<Geo>,
    #[serde(default)]
    pub phones: Vec<Phone>,
    pub website: Option<String>,
    /// IANA time zone name, e.g. `America/Chicago`.
    pub timezone: String,
    /// ISO 4217 currency of this dealership's prices.
    #[serde(default = "default_currency")]
    pub currency: String,
    #[serde(default)]
    pub brands: Vec<String>,
    #[serde(default)]
    pub hours: Vec<Hours>,
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// The charges the dealership adds to every sale (documentation fee,
    /// required add-ons), in its currency's minor units: shown to agents as
    /// already included in every `price`. Leave it out if undisclosed; `[]`
    /// says there are none.
    #[serde(default)]
    pub fees: Option<Vec<crate::model::DealerFee>>,
    /// Let callers without a token read this dealership's profile and inventory
    /// (AAP: inventory search must work anonymously).
    #[serde(default)]
    pub anonymous_inventory: bool,
    /// Serve this dealership over the Auto Agent Protocol (AAP v1.3 over A2A):
    /// its agent card and JSON-RPC endpoint under `/aap/<id>`.
    #[serde(default)]
    pub aap: bool,
    /// Which upstream serves each domain, by upstream id.
    #[serde(default)]
    pub routes: BTreeMap<Domain, String>,
}

fn default_currency() -> String {
    "USD".into()
}

/// An upstream instance: a vendor profile plus this dealer's endpoint and credentials.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum UpstreamConfig {
    /// A REST/JSON API driven by a declarative vendor profile (`adapters/*.toml`).
    Rest(RestUpstreamConfig),
    /// A CSV/TSV inventory feed fetched over HTTP and refreshed on an interval.
    Feed(FeedUpstreamConfig),
    /// A CRM's ADF XML lead intake over HTTP POST.
    AdfHttp(AdfHttpConfig),
    /// A CRM's ADF XML lead intake by e-mail (SMTP).
    AdfEmail(AdfEmailConfig),
    /// A SOAP/XML web service driven by a declarative SOAP profile.
    Soap(SoapUpstreamConfig),
}

impl UpstreamConfig {
    /// Every secret this upstream reads (a reload watches the files among them).
    pub fn secret_sources(&self) -> Vec<&SecretSource> {
        match self {
            Self::Rest(r) => r
                .client_id
                .iter()
                .chain(&r.client_secret)
                .chain(r.secrets.values())
                .chain(r.inbound_events.iter().map(|i| &i.secret))
                .collect(),
            Self::Feed(f) => f.secrets.values().collect(),
            Self::AdfHttp(a) => a.token.iter().chain(&a.hmac_secret).collect(),
            Self::AdfEmail(e) => e.username.iter().chain(&e.password).collect(),
            Self::Soap(s) => s.username.iter().chain(&s.password).collect(),
        }
    }

    /// The kind's own settings and checks: the one match over the kinds a
    /// new kind adds an arm to (besides its variant above).
    pub fn kind(&self) -> &dyn UpstreamKind {
        match self {
            Self::Rest(r) => r,
            Self::Feed(f) => f,
            Self::AdfHttp(h) => h,
            Self::AdfEmail(e) => e,
            Self::Soap(s) => s,
        }
    }

    /// Quota, retries and circuit breaker of this upstream.
    pub fn resilience(&self) -> &ResilienceConfig {
        self.kind().resilience()
    }

    /// Timeout of one upstream request.
    pub fn timeout(&self) -> Duration {
        self.kind().timeout()
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestUpstreamConfig {
    /// A built-in profile name (e.g. `cdk-fortellis`) or a path to a profile file.
    pub profile: String,
    /// Base URL the profile's paths are appended to.
    pub base_url: String,
    /// OAuth2 token endpoint, for profiles that use client credentials.
    pub token_url: Option<String>,
    pub client_id: Option<SecretSource>,
    pub client_secret: Option<SecretSource>,
    /// Named secrets the profile's header templates use as `{secrets.NAME}`.
    #[serde(default)]
    pub secrets: BTreeMap<String, SecretSource>,
    /// Named values the profile's templates use as `{vars.NAME}` (e.g. `subscription_id`).
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// Timeout of one upstream HTTP request.
    #[serde(default = "default_upstream_timeout", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    /// Quota, retries and circuit breaker for this upstream.
    #[serde(default)]
    pub resilience: ResilienceConfig,
    /// How often the inventory mirror reads this upstream's inventory (where
    /// it serves inventory): a duration, or `"off"` to read through on every
    /// cache miss instead.
    #[serde(default = "mirror::default_inventory_sync")]
    pub inventory_sync: SyncInterval,
    /// The vendor pushes change events to `POST /events/inbound/<id>`; each
    /// one reads the inventory again at once instead of at the next interval.
    #[serde(default)]
    pub inbound_events: Option<InboundEventsConfig>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedUpstreamConfig {
    /// `http(s)://` URL of the feed file.
    pub url: String,
    /// A built-in feed mapping (`homenet-csv`, `google-vehicle-listings`) or a path to one.
    pub mapping: String,
    /// How often to poll the feed (conditional GET with ETag / Last-Modified).
    #[serde(default = "default_refresh", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub refresh_interval: Duration,
    #[serde(default = "default_upstream_timeout", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    /// Quota, retries and circuit breaker for this upstream.
    #[serde(default)]
    pub resilience: ResilienceConfig,
    /// Extra request headers (e.g. an API key), values may use `{secrets.NAME}`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub secrets: BTreeMap<String, SecretSource>,
}

pub(crate) fn default_upstream_timeout() -> Duration {
    Duration::from_secs(10)
}

fn default_refresh() -> Duration {
    Duration::from_secs(15 * 60)
}

/// A bearer token and what it may do.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// Name used in logs and audit records (never the secret).
    pub name: String,
    pub secret: SecretSource,
    /// Dealership ids this token may use; `"*"` means all.
    pub dealerships: Vec<String>,
    /// Scopes such as `amcp:inventory:read`.
    pub scopes: Vec<String>,
    /// This token's own quota over all tools, instead of `rate_limits.per_token`.
    pub rate_limit: Option<Rate>,
}

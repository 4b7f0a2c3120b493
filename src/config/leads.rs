//! Configuration of lead capture: the `[leads]` rules and the two ADF intake
//! kinds a dealership can route its `leads` domain to.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ResilienceConfig, SecretSource, default_upstream_timeout};

/// Lead rules and delivery, shared by every dealership.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LeadsConfig {
    /// The same customer sending an equivalent lead within this window gets `status: duplicate`
    /// and nothing is sent again.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub duplicate_window: Duration,
    /// `source` of the ADF prospect `<id>`: how the CRM tells our leads apart from other providers'.
    pub id_source: String,
    pub delivery: DeliveryConfig,
    /// How often the CRMs that answer back (REST profiles with `[lead_status]`)
    /// are asked what became of the leads they took in the last 90 days, until
    /// each is sold or lost; a change is a `lead.status_changed` event.
    /// `"off"` never asks.
    pub status_watch: super::SyncInterval,
}

impl Default for LeadsConfig {
    fn default() -> Self {
        Self {
            duplicate_window: Duration::from_secs(24 * 3600),
            id_source: "dms-bridge".into(),
            delivery: DeliveryConfig::default(),
            status_watch: super::SyncInterval::Every(Duration::from_secs(5 * 60)),
        }
    }
}

/// The outbox that delivers accepted leads: retries with jittered exponential backoff,
/// resends with the same ADF `<id>` and `status="resend"`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DeliveryConfig {
    /// Attempts before a delivery is recorded as failed for good.
    pub max_attempts: u32,
    /// Wait before the first retry; doubles per attempt, with jitter.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub base_delay: Duration,
    /// Longest wait between attempts.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub max_delay: Duration,
    /// How long an attempt holds a lead before another worker (or a restarted bridge) may retry
    /// it. Must be longer than every ADF upstream's timeout.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub lease: Duration,
    /// Deliveries in flight at once.
    pub concurrency: usize,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        Self {
            max_attempts: 12,
            base_delay: Duration::from_secs(5),
            max_delay: Duration::from_secs(30 * 60),
            lease: Duration::from_secs(60),
            concurrency: 4,
        }
    }
}

/// A CRM's ADF intake over HTTP: the XML document is POSTed as the body.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdfHttpConfig {
    /// `http(s)://` URL of the intake.
    pub url: String,
    /// The dealer's intake token, sent as the `token_param` query parameter.
    pub token: Option<SecretSource>,
    #[serde(default = "default_token_param")]
    pub token_param: String,
    /// Key of an HMAC-SHA256 signature of the raw body, sent hex-encoded in `signature_header`.
    pub hmac_secret: Option<SecretSource>,
    #[serde(default = "default_signature_header")]
    pub signature_header: String,
    #[serde(default = "default_upstream_timeout", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    #[serde(default)]
    pub resilience: ResilienceConfig,
}

fn default_token_param() -> String {
    "token".into()
}

fn default_signature_header() -> String {
    "x-adf-signature".into()
}

/// A CRM's ADF intake by e-mail: the XML document is the whole plain-text body.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdfEmailConfig {
    pub smtp_host: String,
    #[serde(default = "default_smtp_port")]
    pub smtp_port: u16,
    #[serde(default)]
    pub tls: SmtpTls,
    pub username: Option<SecretSource>,
    pub password: Option<SecretSource>,
    /// Envelope and header sender, e.g. `leads@bridge.example.com`.
    pub from: String,
    /// The CRM's intake address(es).
    pub to: Vec<String>,
    /// Subject line; `{lead_id}` is replaced by the lead's id.
    #[serde(default = "default_subject")]
    pub subject: String,
    #[serde(default = "default_upstream_timeout", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    #[serde(default)]
    pub resilience: ResilienceConfig,
}

/// How the SMTP connection is secured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SmtpTls {
    /// Plain SMTP upgraded with STARTTLS (required).
    #[default]
    Starttls,
    /// TLS from the first byte (port 465).
    Tls,
    /// No encryption: only for a relay on the same host or a test receiver.
    None,
}

fn default_smtp_port() -> u16 {
    587
}

fn default_subject() -> String {
    "ADF lead {lead_id}".into()
}

/// Checks of `[leads]` and of the ADF upstreams that need the whole config.
pub(super) fn validate(config: &super::Config, errors: &mut Vec<super::ConfigError>) {
    use super::ConfigError;
    if config
        .leads
        .status_watch
        .every()
        .is_some_and(|every| every < Duration::from_secs(1))
    {
        errors.push(ConfigError::new(
            "leads.status_watch",
            "must be at least 1s (or \"off\")",
        ));
    }
    let d = &config.leads.delivery;
    if d.max_attempts == 0 {
        errors.push(ConfigError::new(
            "leads.delivery.max_attempts",
            "must be at least 1",
        ));
    }
    if d.concurrency == 0 {
        errors.push(ConfigError::new(
            "leads.delivery.concurrency",
            "must be at least 1",
        ));
    }
    if d.base_delay > d.max_delay {
        errors.push(ConfigError::new(
            "leads.delivery.base_delay",
            "must not exceed leads.delivery.max_delay",
        ));
    }
    if config.leads.id_source.trim().is_empty() {
        errors.push(ConfigError::new("leads.id_source", "must not be empty"));
    }
    // An attempt still running when its lease ends could be sent twice at once.
    for (id, upstream) in &config.upstreams {
        if matches!(
            upstream,
            super::UpstreamConfig::AdfHttp(_) | super::UpstreamConfig::AdfEmail(_)
        ) && upstream.timeout() >= d.lease
        {
            errors.push(ConfigError::new(
                format!("upstreams.{id}.timeout"),
                "must be shorter than leads.delivery.lease",
            ));
        }
    }
}

pub(super) fn validate_email(path: &str, e: &AdfEmailConfig, errors: &mut Vec<super::ConfigError>) {
    use super::ConfigError;
    if e.smtp_host.trim().is_empty() {
        errors.push(ConfigError::new(
            format!("{path}.smtp_host"),
            "must not be empty",
        ));
    }
    if !is_mailbox(&e.from) {
        errors.push(ConfigError::new(
            format!("{path}.from"),
            "must be an e-mail address",
        ));
    }
    if e.to.is_empty() {
        errors.push(ConfigError::new(
            format!("{path}.to"),
            "list the CRM's intake address",
        ));
    }
    for (i, to) in e.to.iter().enumerate() {
        if !is_mailbox(to) {
            errors.push(ConfigError::new(
                format!("{path}.to[{i}]"),
                "must be an e-mail address",
            ));
        }
    }
    if e.username.is_some() != e.password.is_some() {
        errors.push(ConfigError::new(
            format!("{path}.password"),
            "give both username and password, or neither",
        ));
    }
}

/// A plain `local@domain` address (display names are not accepted here).
fn is_mailbox(s: &str) -> bool {
    s.parse::<lettre::Address>().is_ok()
}

//! The declarative SOAP/STAR XML adapter kind: a SOAP profile (`adapters/*.toml`
//! with a `version`) plus a repair-order mapping drive every call. Answers are
//! read into the same tree the JSON kinds map ([`xml::to_json`]), so one
//! mapping engine serves both.

mod answer;
mod call;
pub mod envelope;
mod inventory;
pub mod profile;
mod repair_orders;
pub mod xml;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue};
use secrecy::SecretString;

use self::envelope::SoapVersion;
use self::profile::{Security, SoapErrorSpec, SoapProfile};
use super::DealershipContext;
use super::resilience::UpstreamPolicy;
use super::template::{self, NO_PARAMS, Template, TemplateContext};
use super::{
    AdapterError, BuildError, ErrorClass, InventorySnapshot, UpstreamAdapter, UpstreamInstance,
};
use crate::config::catalog;
use crate::config::{SecretSource, SoapUpstreamConfig, resolve_secret};
use crate::model::Domain;
use crate::model::repair_order::{RepairOrder, RoQuery, RoRef};

/// SOAP templates have no `{secrets.x}`: the only secrets are the token's.
static NO_SECRETS: BTreeMap<String, SecretString> = BTreeMap::new();

/// A built SOAP upstream for one dealership.
pub struct SoapAdapter {
    policy: Arc<UpstreamPolicy>,
    http: reqwest::Client,
    base_url: String,
    profile_name: String,
    domains: Vec<Domain>,
    version: SoapVersion,
    /// The profile's override; else the version's standard content type.
    content_type: Option<HeaderValue>,
    soap_action_header: bool,
    headers: Vec<(HeaderName, Template)>,
    /// Values for headers, paths and actions.
    vars: BTreeMap<String, String>,
    /// The same values XML-escaped, for bodies.
    xml_vars: BTreeMap<String, String>,
    credentials: Option<Credentials>,
    errors: SoapErrorSpec,
    inventory: Option<inventory::InventoryOp>,
    /// How often the mirror reads the inventory (`None`: on every cache miss).
    inventory_sync: Option<std::time::Duration>,
    /// Joins concurrent inventory reads into one call.
    flight: super::flight::Flight,
    repair_orders: Option<repair_orders::RoOps>,
    dealership: DealershipContext,
}

/// The WS-Security UsernameToken's values; exposed only while an envelope is built.
struct Credentials {
    username: SecretString,
    password: SecretString,
}

impl SoapAdapter {
    /// Builds the adapter: reads the profile and mapping, resolves the
    /// credentials and compiles templates and paths, reporting every problem
    /// with its key. No network I/O happens here.
    pub fn build(
        upstream: &UpstreamInstance<'_>,
        dealership: DealershipContext,
        config: &SoapUpstreamConfig,
        base: &Path,
    ) -> Result<Self, Vec<BuildError>> {
        let mut errors = Vec::new();
        let profile = catalog::read(&config.profile, base, catalog::builtin_profile)
            .and_then(|text| {
                // Name the file: the line in the message is a line of it.
                SoapProfile::from_toml(&text).map_err(|e| format!("{}: {e}", config.profile))
            })
            .map_err(|e| vec![BuildError::at_key("profile", e)])?;
        let credentials = build_credentials(profile.security, config, base, &mut errors);
        let ctx = TemplateContext {
            vars: &config.vars,
            secrets: &NO_SECRETS,
            dealership_id: &dealership.id,
            params: &NO_PARAMS,
        };
        let headers = template::compile_headers(&profile.headers, &ctx, &mut errors);
        let inventory = profile
            .inventory
            .as_ref()
            .and_then(|spec| inventory::compile(spec, &ctx, base, &mut errors));
        let repair_orders = profile
            .repair_orders
            .as_ref()
            .and_then(|spec| repair_orders::compile(spec, &ctx, base, &mut errors));
        check_profile(&profile, &mut errors);
        let content_type = profile.content_type.as_deref().and_then(|ct| {
            HeaderValue::from_str(ct)
                .map_err(|_| {
                    errors.push(BuildError::in_profile("content_type: not a header value"))
                })
                .ok()
        });
        let http = crate::net::client_builder()
            .timeout(config.timeout)
            .user_agent(concat!("dms-bridge/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| vec![BuildError::upstream(format!("http client: {e}"))])?;
        if !errors.is_empty() {
            return Err(errors);
        }
        let version = SoapVersion::from(profile.version);
        Ok(Self {
            policy: upstream.policy.clone(),
            http,
            base_url: config.base_url.trim_end_matches('/').to_owned(),
            profile_name: profile.name,
            domains: profile.domains,
            version,
            content_type,
            soap_action_header: profile
                .soap_action_header
                .unwrap_or(version.soap_action_header()),
            headers,
            xml_vars: config
                .vars
                .iter()
                .map(|(k, v)| (k.clone(), envelope::escape(v).into_owned()))
                .collect(),
            vars: config.vars.clone(),
            credentials,
            errors: profile.errors,
            inventory,
            inventory_sync: config.inventory_sync.every(),
            flight: Default::default(),
            repair_orders,
            dealership,
        })
    }
}

/// Resolves the token's user name and password when the profile's security needs them.
fn build_credentials(
    security: Security,
    config: &SoapUpstreamConfig,
    base: &Path,
    errors: &mut Vec<BuildError>,
) -> Option<Credentials> {
    if security == Security::None {
        return None;
    }
    let mut need = |name: &str, source: Option<&SecretSource>| match source {
        Some(source) => resolve_secret(source, base)
            .map_err(|e| errors.push(BuildError::at_key(name, e)))
            .ok(),
        None => {
            errors.push(BuildError::at_key(
                name,
                "required by the profile's username_token security",
            ));
            None
        }
    };
    let username = need("username", config.username.as_ref());
    let password = need("password", config.password.as_ref());
    Some(Credentials {
        username: username?,
        password: password?,
    })
}

/// What serde cannot say about a profile: the domains it claims and codes it
/// cannot honour.
fn check_profile(profile: &SoapProfile, errors: &mut Vec<BuildError>) {
    for domain in &profile.domains {
        if !matches!(domain, Domain::Inventory | Domain::RepairOrders) {
            errors.push(BuildError::in_profile(format!(
                "domains: the soap kind serves inventory and repair_orders, not {}",
                domain.as_str()
            )));
        }
    }
    let sections = [
        (Domain::Inventory, profile.inventory.is_some()),
        (Domain::RepairOrders, profile.repair_orders.is_some()),
    ];
    for (domain, present) in sections {
        if profile.domains.contains(&domain) && !present {
            errors.push(BuildError::at_key(
                "profile",
                format!(
                    "lists the {0} domain but has no [{0}] section",
                    domain.as_str()
                ),
            ));
        }
    }
    let tables = [
        ("faults", &profile.errors.faults),
        ("codes", &profile.errors.codes),
    ];
    for (table, entries) in tables {
        for (code, class) in entries {
            if *class == ErrorClass::Reauthenticate {
                errors.push(BuildError::in_profile(format!(
                    "errors.{table}.{code}: reauthenticate needs a token to refresh; SOAP credentials are fixed (use unauthorized)"
                )));
            }
        }
    }
}

impl UpstreamAdapter for SoapAdapter {
    fn domains(&self) -> &[Domain] {
        &self.domains
    }

    fn policy(&self) -> &UpstreamPolicy {
        &self.policy
    }

    fn inventory_sync(&self) -> Option<std::time::Duration> {
        self.inventory_sync.filter(|_| self.inventory.is_some())
    }

    async fn inventory(&self) -> Result<Arc<InventorySnapshot>, AdapterError> {
        Box::pin(
            self.flight
                .run(async { self.read_inventory().await.map(Arc::new) }),
        )
        .await
    }

    // Boxed: a per-day read nests the policy, the cache and the HTTP exchange,
    // and every tool's dispatch future would otherwise carry that size inline.
    async fn repair_orders(&self, query: &RoQuery<'_>) -> Result<Vec<RepairOrder>, AdapterError> {
        Box::pin(self.list_repair_orders(query)).await
    }

    async fn repair_order(&self, which: RoRef<'_>) -> Result<Option<RepairOrder>, AdapterError> {
        Box::pin(self.find_repair_order(which)).await
    }
}

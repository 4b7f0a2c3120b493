//! The declarative REST/JSON adapter kind: a vendor profile (`adapters/*.toml`)
//! plus a field mapping (`mappings/*.toml`) drive every request.

mod auth;
mod body;
mod fetch;
mod inventory;
pub mod leads;
pub mod profile;
pub mod records;
mod repair_orders;
mod slots;
mod valuation;
mod write;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use reqwest::header::HeaderName;
use secrecy::SecretString;

use self::auth::{OAuthClient, UpstreamAuth};
use self::profile::{AuthSpec, DeltaSpec, ErrorSpec, OperationSpec, Profile};
use super::flight::Flight;
use super::mapping::{ValuePath, VehicleMapping};
use super::resilience::UpstreamPolicy;
use super::{
    AdapterError, BuildError, DealershipContext, DeliveryReceipt, InventorySnapshot, LeadDelivery,
    UpstreamAdapter, UpstreamInstance,
};
use crate::adapters::template::{self, Template, TemplateContext};
use crate::config::catalog;
use crate::config::{RestUpstreamConfig, resolve_secret};
use crate::model::Domain;
use crate::model::crm::CrmStatus;
use crate::model::repair_order::{RepairOrder, RoQuery, RoRef};
use crate::model::service::{
    Booking, BookingRequest, CancelRequest, ServiceItem, Slot, SlotRequest,
};
use crate::model::valuation::{TradeValueRequest, Valuation};

/// A built REST upstream for one dealership.
pub struct RestAdapter {
    policy: Arc<UpstreamPolicy>,
    http: reqwest::Client,
    base_url: String,
    profile_name: String,
    domains: Vec<Domain>,
    headers: Vec<(HeaderName, Template)>,
    vars: BTreeMap<String, String>,
    secrets: BTreeMap<String, SecretString>,
    auth: UpstreamAuth,
    errors: CompiledErrors,
    inventory: Option<Operation>,
    trade_value: Option<valuation::TradeValueOp>,
    service_menu: Option<records::RecordsOp>,
    availability: Option<records::RecordsOp>,
    repair_orders: Option<repair_orders::RepairOrdersOp>,
    book_appointment: Option<write::WriteOp>,
    cancel_appointment: Option<write::WriteOp>,
    submit_lead: Option<write::WriteOp>,
    lead_status: Option<leads::StatusOp>,
    dealership: DealershipContext,
    /// Concurrent inventory reads share one upstream request.
    flight: Flight,
    /// The last inventory answer, so an unchanged one is not parsed again.
    last_read: inventory::LastRead,
    /// Records paths that matched nothing in an answer, each logged once.
    missing_records: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// How often the inventory mirror reads the inventory (`None`: read through).
    inventory_sync: Option<std::time::Duration>,
    /// The service menu, kept a while: it changes rarely, and every availability
    /// check and booking checks its codes against it.
    menu: moka::future::Cache<(), Arc<Vec<ServiceItem>>>,
}

/// How long the service menu is kept.
const MENU_KEEP: std::time::Duration = std::time::Duration::from_secs(600);

/// Request parameters of the service menu and of availability.
const MENU_PARAMS: [&str; 4] = ["vin", "year", "make", "model"];
const SLOT_PARAMS: [&str; 7] = [
    "service_codes",
    "from",
    "to",
    "vin",
    "year",
    "make",
    "model",
];

/// A profile operation with its templates and mapping compiled.
struct Operation {
    spec: OperationSpec,
    path: Template,
    query: Vec<(String, Template)>,
    records: Option<ValuePath>,
    mapping: VehicleMapping,
    delta: Option<Delta>,
}

/// A compiled changes-since read: the operation's query plus the delta's.
struct Delta {
    query: Vec<(String, Template)>,
    full_every: std::time::Duration,
}

struct CompiledErrors {
    spec: ErrorSpec,
    code_paths: Vec<ValuePath>,
    in_band: Option<ValuePath>,
}

impl RestAdapter {
    /// Builds the adapter: reads the profile and mapping, resolves secrets and
    /// compiles templates. No network I/O happens here.
    pub fn build(
        upstream: &UpstreamInstance<'_>,
        dealership: DealershipContext,
        config: &RestUpstreamConfig,
        base: &Path,
    ) -> Result<Self, Vec<BuildError>> {
        let mut errors = Vec::new();
        let profile = catalog::read(&config.profile, base, catalog::builtin_profile)
            .and_then(|text| {
                // Name the file: the line in the message is a line of it.
                Profile::from_toml(&text).map_err(|e| format!("{}: {e}", config.profile))
            })
            .map_err(|e| vec![BuildError::at_key("profile", e)])?;
        let mut secret =
            |name: &str, source: Option<&crate::config::SecretSource>| -> Option<SecretString> {
                let source = source?;
                resolve_secret(source, base)
                    .map_err(|e| errors.push(BuildError::at_key(name, e)))
                    .ok()
            };
        let secrets: BTreeMap<String, SecretString> = config
            .secrets
            .iter()
            .map(|(k, v)| {
                // Reported once; an empty stand-in keeps templates from a second, misleading problem.
                let resolved = secret(&format!("secrets.{k}"), Some(v));
                (
                    k.clone(),
                    resolved.unwrap_or_else(|| SecretString::from("")),
                )
            })
            .collect();
        let client_id = secret("client_id", config.client_id.as_ref());
        let client_secret = secret("client_secret", config.client_secret.as_ref());
        let ctx = TemplateContext {
            vars: &config.vars,
            secrets: &secrets,
            dealership_id: &dealership.id,
            params: &template::NO_PARAMS,
        };
        let headers = template::compile_headers(&profile.headers, &ctx, &mut errors);
        let inventory = profile
            .inventory
            .as_ref()
            .and_then(|spec| compile_operation(spec, &ctx, base, &mut errors));
        let trade_value = profile
            .trade_value
            .as_ref()
            .and_then(|spec| valuation::compile(spec, &ctx, &mut errors));
        let service_menu = profile.service_menu.as_ref().and_then(|spec| {
            records::compile(
                "service_menu",
                spec,
                &ctx,
                &MENU_PARAMS,
                (&["code"], &["name"]),
                &mut errors,
            )
        });
        let availability = profile.availability.as_ref().and_then(|spec| {
            records::compile(
                "availability",
                spec,
                &ctx,
                &SLOT_PARAMS,
                (&["start"], &["end", "duration_minutes", "advisor_id"]),
                &mut errors,
            )
        });
        let repair_orders = profile
            .repair_orders
            .as_ref()
            .and_then(|spec| repair_orders::compile(spec, &ctx, base, &mut errors));
        let book_appointment = profile
            .book_appointment
            .as_ref()
            .and_then(|spec| write::compile(&write::BOOK, spec, &ctx, &mut errors));
        let cancel_appointment = profile
            .cancel_appointment
            .as_ref()
            .and_then(|spec| write::compile(&write::CANCEL, spec, &ctx, &mut errors));
        let submit_lead = profile
            .submit_lead
            .as_ref()
            .and_then(|spec| write::compile(&leads::SUBMIT, spec, &ctx, &mut errors));
        let lead_status = profile
            .lead_status
            .as_ref()
            .and_then(|spec| leads::compile_status(spec, &ctx, &mut errors));
        let auth = build_auth(&profile.auth, config, client_id, client_secret, &mut errors);
        let compiled_errors = compile_errors(&profile.errors, &mut errors);
        if profile.domains.contains(&Domain::Inventory) && profile.inventory.is_none() {
            errors.push(BuildError::at_key(
                "profile",
                "lists the inventory domain but has no [inventory] operation",
            ));
        }
        if profile.domains.contains(&Domain::Service) && profile.availability.is_none() {
            errors.push(BuildError::at_key(
                "profile",
                "lists the service domain but has no [availability] operation",
            ));
        }
        if profile.domains.contains(&Domain::RepairOrders) && profile.repair_orders.is_none() {
            errors.push(BuildError::at_key(
                "profile",
                "lists the repair_orders domain but has no [repair_orders] section",
            ));
        }
        if profile.domains.contains(&Domain::Leads) && profile.submit_lead.is_none() {
            errors.push(BuildError::at_key(
                "profile",
                "lists the leads domain but has no [submit_lead] operation",
            ));
        }
        if profile.domains.contains(&Domain::Deals) && profile.trade_value.is_none() {
            errors.push(BuildError::at_key(
                "profile",
                "lists the deals domain but has no [trade_value] operation",
            ));
        }
        let http = crate::net::client_builder()
            .timeout(config.timeout)
            .user_agent(concat!("dms-bridge/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| vec![BuildError::upstream(format!("http client: {e}"))])?;
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Self {
            policy: upstream.policy.clone(),
            http,
            base_url: config.base_url.trim_end_matches('/').to_owned(),
            profile_name: profile.name.clone(),
            domains: profile.domains.clone(),
            headers,
            vars: config.vars.clone(),
            secrets,
            auth: auth.unwrap_or(UpstreamAuth::None),
            errors: compiled_errors,
            inventory,
            trade_value,
            service_menu,
            availability,
            repair_orders,
            book_appointment,
            cancel_appointment,
            submit_lead,
            lead_status,
            dealership,
            flight: Flight::default(),
            last_read: inventory::LastRead::default(),
            missing_records: std::sync::Mutex::default(),
            inventory_sync: config.inventory_sync.every(),
            menu: moka::future::Cache::builder()
                .max_capacity(1)
                .time_to_live(MENU_KEEP)
                .build(),
        })
    }
}

/// Compiles an operation's query templates, records path and mapping.
fn compile_operation(
    spec: &OperationSpec,
    ctx: &TemplateContext<'_>,
    base: &Path,
    errors: &mut Vec<BuildError>,
) -> Option<Operation> {
    let mut query = Vec::new();
    for (k, v) in &spec.query {
        match Template::compile(v, ctx) {
            Ok(t) => query.push((k.clone(), t)),
            Err(e) => errors.push(BuildError::in_profile(format!("inventory.query.{k}: {e}"))),
        }
    }
    let path = Template::compile(&spec.path, ctx)
        .map_err(|e| errors.push(BuildError::in_profile(format!("inventory.path: {e}"))))
        .ok()?;
    let mapping = catalog::read(&spec.mapping, base, catalog::builtin_mapping)
        .map_err(|e| vec![e])
        .and_then(|text| VehicleMapping::from_toml(&text))
        .map_err(|e| {
            errors.extend(
                e.into_iter()
                    .map(|e| BuildError::in_mapping(&spec.mapping, e)),
            )
        })
        .ok()?;
    let records = match spec.records.as_str() {
        "" => None,
        path => Some(
            ValuePath::parse(path)
                .map_err(|e| errors.push(BuildError::in_profile(format!("inventory.records: {e}"))))
                .ok()?,
        ),
    };
    let delta = spec
        .delta
        .as_ref()
        .and_then(|d| compile_delta(d, &query, ctx, errors));
    Some(Operation {
        spec: spec.clone(),
        path,
        query,
        records,
        mapping,
        delta,
    })
}

/// The delta's query templates, which may name `{since}` and `{until}`.
fn compile_delta(
    spec: &DeltaSpec,
    base_query: &[(String, Template)],
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> Option<Delta> {
    let names = template::param_names(&["since", "until"]);
    let ctx = TemplateContext {
        params: &names,
        ..*ctx
    };
    let before = errors.len();
    let mut query = base_query.to_vec();
    for (k, v) in &spec.query {
        match Template::compile(v, &ctx) {
            Ok(t) => query.push((k.clone(), t)),
            Err(e) => errors.push(BuildError::in_profile(format!(
                "inventory.delta.query.{k}: {e}"
            ))),
        }
    }
    (errors.len() == before).then_some(Delta {
        query,
        full_every: spec.full_every,
    })
}

fn build_auth(
    spec: &AuthSpec,
    config: &RestUpstreamConfig,
    client_id: Option<SecretString>,
    client_secret: Option<SecretString>,
    errors: &mut Vec<BuildError>,
) -> Option<UpstreamAuth> {
    // Only complain about a missing credential when the config gives none at all;
    // one that failed to resolve was already reported.
    let mut need = |what: &str, value: Option<SecretString>| {
        let configured = match what {
            "client_id" => config.client_id.is_some(),
            _ => config.client_secret.is_some(),
        };
        if value.is_none() && !configured {
            errors.push(BuildError::at_key(what, "required by the profile's auth"));
        }
        value
    };
    Some(match spec {
        AuthSpec::None => UpstreamAuth::None,
        AuthSpec::Basic => UpstreamAuth::Basic {
            user: need("client_id", client_id)?,
            password: need("client_secret", client_secret)?,
        },
        AuthSpec::Bearer => UpstreamAuth::Bearer(need("client_secret", client_secret)?),
        AuthSpec::Oauth2ClientCredentials {
            client_auth,
            scope,
            token_path,
            expires_path,
            extra_form,
            form_fields,
        } => {
            let id = need("client_id", client_id);
            let secret = need("client_secret", client_secret);
            let Some(token_url) = config.token_url.clone() else {
                errors.push(BuildError::at_key(
                    "token_url",
                    "required by the profile's oauth2_client_credentials auth",
                ));
                return None;
            };
            let token_path = ValuePath::parse(token_path)
                .map_err(|e| errors.push(BuildError::in_profile(format!("auth.token_path: {e}"))))
                .ok();
            let expires_path = ValuePath::parse(expires_path)
                .map_err(|e| errors.push(BuildError::in_profile(format!("auth.expires_path: {e}"))))
                .ok();
            UpstreamAuth::OAuth(Box::new(
                OAuthClient::new(
                    token_url,
                    id?,
                    secret?,
                    *client_auth,
                    scope.clone(),
                    token_path?,
                    expires_path?,
                    extra_form.clone(),
                )
                .with_form_fields(&form_fields.client_id, &form_fields.client_secret),
            ))
        }
    })
}

fn compile_errors(spec: &ErrorSpec, errors: &mut Vec<BuildError>) -> CompiledErrors {
    let code_paths = spec
        .code
        .iter()
        .filter_map(|p| {
            ValuePath::parse(p)
                .map_err(|e| errors.push(BuildError::in_profile(format!("errors.code: {e}"))))
                .ok()
        })
        .collect();
    let in_band = spec.in_band.as_ref().and_then(|b| {
        ValuePath::parse(&b.path)
            .map_err(|e| errors.push(BuildError::in_profile(format!("errors.in_band: {e}"))))
            .ok()
    });
    CompiledErrors {
        spec: spec.clone(),
        code_paths,
        in_band,
    }
}

impl UpstreamAdapter for RestAdapter {
    fn domains(&self) -> &[Domain] {
        &self.domains
    }

    fn policy(&self) -> &UpstreamPolicy {
        &self.policy
    }

    fn inventory_sync(&self) -> Option<std::time::Duration> {
        self.inventory_sync.filter(|_| self.inventory.is_some())
    }

    fn inventory_delta(&self) -> Option<std::time::Duration> {
        self.inventory
            .as_ref()?
            .delta
            .as_ref()
            .map(|d| d.full_every)
    }

    async fn inventory_changes(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Option<Arc<InventorySnapshot>>, AdapterError> {
        let Some(op) = self.inventory.as_ref().filter(|op| op.delta.is_some()) else {
            return Ok(None);
        };
        self.list_changes(op, since)
            .await
            .map(|s| Some(Arc::new(s)))
    }

    async fn inventory(&self) -> Result<Arc<InventorySnapshot>, AdapterError> {
        let op = self.inventory.as_ref().ok_or(AdapterError::Unsupported)?;
        self.flight
            .run(async { self.list_inventory(op).await.map(Arc::new) })
            .await
    }

    async fn trade_value(
        &self,
        request: &TradeValueRequest<'_>,
    ) -> Result<Option<Valuation>, AdapterError> {
        let op = self.trade_value.as_ref().ok_or(AdapterError::Unsupported)?;
        self.value_trade(op, request).await
    }

    async fn service_menu(&self) -> Result<Vec<ServiceItem>, AdapterError> {
        let op = self
            .service_menu
            .as_ref()
            .ok_or(AdapterError::Unsupported)?;
        // Concurrent callers share one request; failures are not kept.
        let menu = self
            .menu
            .try_get_with((), async {
                let records = self.read_records(op, &BTreeMap::new()).await?;
                let items: Vec<ServiceItem> = records
                    .into_iter()
                    .filter_map(|mut f| {
                        Some(ServiceItem {
                            code: f.remove("code")?,
                            name: f.remove("name"),
                        })
                    })
                    .collect();
                Ok::<_, AdapterError>(Arc::new(items))
            })
            .await
            .map_err(|e| (*e).clone())?;
        Ok(menu.as_ref().clone())
    }

    async fn service_slots(&self, request: &SlotRequest<'_>) -> Result<Vec<Slot>, AdapterError> {
        let op = self
            .availability
            .as_ref()
            .ok_or(AdapterError::Unsupported)?;
        let text = |v: Option<&str>| v.unwrap_or_default().to_owned();
        let params = BTreeMap::from([
            ("service_codes".to_owned(), request.service_codes.join(",")),
            ("from".to_owned(), request.from.to_string()),
            ("to".to_owned(), request.to.to_string()),
            ("vin".to_owned(), text(request.vin)),
            (
                "year".to_owned(),
                request.year.map(|y| y.to_string()).unwrap_or_default(),
            ),
            ("make".to_owned(), text(request.make)),
            ("model".to_owned(), text(request.model)),
        ]);
        let records = self.read_records(op, &params).await?;
        let tz = self.dealership.timezone;
        let mut unreadable = 0;
        let slots: Vec<Slot> = records
            .iter()
            .filter_map(|f| {
                let slot = slots::slot_from_fields(f, tz);
                unreadable += usize::from(slot.is_none());
                slot
            })
            .collect();
        if unreadable > 0 {
            tracing::warn!(profile = %self.profile_name, unreadable, "Skipped slots whose start the bridge cannot read.");
        }
        Ok(slots)
    }

    async fn repair_orders(&self, query: &RoQuery<'_>) -> Result<Vec<RepairOrder>, AdapterError> {
        self.list_repair_orders(query).await
    }

    async fn repair_order(&self, which: RoRef<'_>) -> Result<Option<RepairOrder>, AdapterError> {
        self.find_repair_order(which).await
    }

    async fn book_appointment(
        &self,
        request: &BookingRequest<'_>,
    ) -> Result<Booking, AdapterError> {
        let op = self
            .book_appointment
            .as_ref()
            .ok_or(AdapterError::Unsupported)?;
        self.book(op, request).await
    }

    async fn cancel_appointment(&self, request: &CancelRequest<'_>) -> Result<(), AdapterError> {
        let op = self
            .cancel_appointment
            .as_ref()
            .ok_or(AdapterError::Unsupported)?;
        self.cancel(op, request).await
    }

    fn lead_channel(&self) -> Option<&'static str> {
        self.submit_lead.as_ref().map(|_| leads::CHANNEL)
    }

    async fn deliver_lead(&self, lead: &LeadDelivery<'_>) -> Result<DeliveryReceipt, AdapterError> {
        let op = self.submit_lead.as_ref().ok_or(AdapterError::Unsupported)?;
        self.submit(op, lead).await
    }

    fn reads_lead_status(&self) -> bool {
        self.lead_status.is_some()
    }

    async fn lead_status(&self, crm_lead_id: &str) -> Result<Option<CrmStatus>, AdapterError> {
        let op = self.lead_status.as_ref().ok_or(AdapterError::Unsupported)?;
        self.read_lead_status(op, crm_lead_id).await
    }
}

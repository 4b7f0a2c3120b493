//! The inventory feed adapter kind: a CSV/TSV file polled over HTTP with
//! conditional requests. A unit that disappears from the feed has been sold.

mod parse;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use reqwest::header::{ETAG, HeaderName, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use secrecy::SecretString;
use tokio::sync::{Mutex, RwLock};

pub use parse::parse_rows;

use super::DealershipContext;
use super::http::{self, status_error};
use super::mapping::{MapContext, MappedUnit, VehicleMapping, map_vehicle};
use super::resilience::UpstreamPolicy;
use super::template::{Template, TemplateContext};
use super::{
    AdapterError, BuildError, InventorySnapshot, SoldUnit, UpstreamAdapter, UpstreamInstance,
};
use crate::config::{FeedUpstreamConfig, catalog, resolve_secret};
use crate::model::Domain;

/// A feed upstream for one dealership. Cheap to clone; clones share state.
#[derive(Clone)]
pub struct FeedAdapter {
    inner: Arc<Inner>,
}

struct Inner {
    policy: Arc<UpstreamPolicy>,
    http: reqwest::Client,
    url: String,
    headers: Vec<(HeaderName, String)>,
    mapping: VehicleMapping,
    dealership: DealershipContext,
    refresh_interval: Duration,
    state: RwLock<FeedState>,
    /// Serialises refreshes so a burst of first calls fetches the feed once.
    refreshing: Mutex<()>,
}

#[derive(Default)]
struct FeedState {
    snapshot: Option<Arc<InventorySnapshot>>,
    etag: Option<String>,
    last_modified: Option<String>,
    /// Units seen in an earlier version of the feed and gone since: sold.
    disappeared: BTreeMap<String, SoldUnit>,
}

impl FeedAdapter {
    pub fn build(
        upstream: &UpstreamInstance<'_>,
        dealership: DealershipContext,
        config: &FeedUpstreamConfig,
        base: &Path,
    ) -> Result<Self, Vec<BuildError>> {
        let mut errors = Vec::new();
        let mapping = catalog::read(&config.mapping, base, catalog::builtin_mapping)
            .map_err(|e| vec![e])
            .and_then(|t| VehicleMapping::from_toml(&t))
            .map_err(|e| {
                e.into_iter()
                    .map(|e| BuildError::in_mapping(&config.mapping, e))
                    .collect::<Vec<_>>()
            });
        let secrets: BTreeMap<String, SecretString> = config
            .secrets
            .iter()
            .map(|(k, v)| {
                // Reported once; an empty stand-in keeps templates from a second, misleading problem.
                let secret = resolve_secret(v, base).unwrap_or_else(|e| {
                    errors.push(BuildError::at_key(format!("secrets.{k}"), e));
                    SecretString::from("")
                });
                (k.clone(), secret)
            })
            .collect();
        let vars = BTreeMap::new();
        let ctx = TemplateContext {
            vars: &vars,
            secrets: &secrets,
            dealership_id: &dealership.id,
            params: &crate::adapters::template::NO_PARAMS,
        };
        let headers = config
            .headers
            .iter()
            .filter_map(|(name, value)| {
                let header = HeaderName::try_from(name.as_str())
                    .map_err(|_| {
                        errors.push(BuildError::at_key(
                            format!("headers.{name}"),
                            "not a header name",
                        ))
                    })
                    .ok()?;
                let value = Template::compile(value, &ctx)
                    .map_err(|e| errors.push(BuildError::at_key(format!("headers.{name}"), e)))
                    .ok()?;
                Some((header, value.render(&ctx)))
            })
            .collect();
        let http = crate::net::client_builder()
            .timeout(config.timeout)
            .user_agent(concat!("dms-bridge/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| vec![BuildError::upstream(format!("http client: {e}"))])?;
        let mapping = match mapping {
            Ok(m) => m,
            Err(mut e) => {
                errors.append(&mut e);
                return Err(errors);
            }
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        let inner = Inner {
            policy: upstream.policy.clone(),
            http,
            url: config.url.clone(),
            headers,
            mapping,
            dealership,
            refresh_interval: config.refresh_interval,
            state: RwLock::new(FeedState::default()),
            refreshing: Mutex::new(()),
        };
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// Fetches the feed (conditionally) and replaces the snapshot if it changed.
    pub async fn refresh(&self) -> Result<Arc<InventorySnapshot>, AdapterError> {
        let _guard = self.inner.refreshing.lock().await;
        let (etag, last_modified) = {
            let state = self.inner.state.read().await;
            (state.etag.clone(), state.last_modified.clone())
        };
        let fetched_at = Utc::now();
        let reply = self
            .inner
            .policy
            .run(true, || {
                self.fetch(etag.as_deref(), last_modified.as_deref())
            })
            .await?;
        if reply.status == StatusCode::NOT_MODIFIED {
            return self
                .inner
                .state
                .read()
                .await
                .snapshot
                .clone()
                .ok_or_else(|| AdapterError::InvalidResponse("304 without a copy".into()));
        }
        let header = |name| {
            reply
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let (new_etag, new_last_modified) = (header(ETAG), header(LAST_MODIFIED));
        let verified_at = verified_at(new_last_modified.as_deref(), fetched_at);
        let rows = parse_rows(&reply.body, self.inner.mapping.feed.as_ref())?;
        self.check_plausible(&rows).await?;
        let snapshot = self
            .apply_rows(&rows, verified_at, fetched_at, new_etag, new_last_modified)
            .await?;
        Ok(snapshot)
    }

    /// One conditional GET; anything but 2xx or 304 is an error (and may be retried).
    async fn fetch(
        &self,
        etag: Option<&str>,
        last_modified: Option<&str>,
    ) -> Result<http::Reply, AdapterError> {
        let mut request = self.inner.http.get(&self.inner.url);
        for (name, value) in &self.inner.headers {
            request = request.header(name, value);
        }
        if let Some(etag) = etag {
            request = request.header(IF_NONE_MATCH, etag);
        }
        if let Some(lm) = last_modified {
            request = request.header(IF_MODIFIED_SINCE, lm);
        }
        let reply = http::send(request).await?;
        if reply.status.is_success() || reply.status == StatusCode::NOT_MODIFIED {
            Ok(reply)
        } else {
            Err(status_error(reply.status, &reply.headers, None))
        }
    }

    /// Refuses answers that parse as CSV but are not this feed: a one-line HTML
    /// page has a "header" and no rows, and taking it would mark every unit sold.
    async fn check_plausible(&self, rows: &[serde_json::Value]) -> Result<(), AdapterError> {
        let Some(first) = rows.first() else {
            let had_units = self
                .inner
                .state
                .read()
                .await
                .snapshot
                .as_ref()
                .is_some_and(|s| !s.listed.is_empty());
            return if had_units {
                Err(AdapterError::InvalidResponse(
                    "feed is suddenly empty; keeping the last good copy".into(),
                ))
            } else {
                Err(AdapterError::InvalidResponse("feed has no rows".into()))
            };
        };
        let has_identity = self
            .inner
            .mapping
            .identity
            .iter()
            .any(|path| !path.resolve(first).is_empty());
        if has_identity {
            Ok(())
        } else {
            Err(AdapterError::InvalidResponse(
                "feed has none of the mapping's identity columns".into(),
            ))
        }
    }

    async fn apply_rows(
        &self,
        rows: &[serde_json::Value],
        verified_at: DateTime<Utc>,
        fetched_at: DateTime<Utc>,
        etag: Option<String>,
        last_modified: Option<String>,
    ) -> Result<Arc<InventorySnapshot>, AdapterError> {
        let d = &self.inner.dealership;
        let ctx = MapContext {
            dealership_id: &d.id,
            currency: &d.currency,
            timezone: d.timezone,
            verified_at,
        };
        let mut skipped = 0usize;
        let units: Vec<MappedUnit> = rows
            .iter()
            .filter_map(|row| {
                map_vehicle(&self.inner.mapping, row, &ctx)
                    .map_err(|_| skipped += 1)
                    .ok()
            })
            .collect();
        if units.is_empty() && !rows.is_empty() {
            return Err(AdapterError::InvalidResponse(
                "no feed row could be mapped".into(),
            ));
        }
        if skipped > 0 {
            tracing::warn!(url = %self.inner.url, skipped, "Skipped feed rows the mapping cannot read.");
        }
        let mut state = self.inner.state.write().await;
        let mut snapshot = InventorySnapshot::from_units(units, fetched_at);
        let present = |s: &InventorySnapshot, id: &str| {
            s.listed.iter().any(|v| v.id == id) || s.sold.iter().any(|x| x.id == id)
        };
        let gone: Vec<SoldUnit> = state
            .snapshot
            .iter()
            .flat_map(|previous| previous.listed.iter())
            .filter(|v| !present(&snapshot, &v.id))
            .map(|v| SoldUnit {
                id: v.id.clone(),
                vin: v.vin.clone(),
                stock: v.stock.clone(),
            })
            .collect();
        for unit in gone {
            state.disappeared.insert(unit.id.clone(), unit);
        }
        // A unit that comes back (a deal fell through) is listed again.
        state
            .disappeared
            .retain(|id, _| !snapshot.listed.iter().any(|v| &v.id == id));
        let extra: Vec<SoldUnit> = state
            .disappeared
            .values()
            .filter(|s| !present(&snapshot, &s.id))
            .cloned()
            .collect();
        snapshot.sold.extend(extra);
        tracing::info!(url = %self.inner.url, listed = snapshot.listed.len(), sold = snapshot.sold.len(), "Feed loaded.");
        let snapshot = Arc::new(snapshot);
        state.snapshot = Some(snapshot.clone());
        state.etag = etag;
        state.last_modified = last_modified;
        Ok(snapshot)
    }
}

/// A feed vouches for its contents as of its `Last-Modified`, never later than we read it.
fn verified_at(last_modified: Option<&str>, fetched_at: DateTime<Utc>) -> DateTime<Utc> {
    last_modified
        .and_then(|lm| DateTime::parse_from_rfc2822(lm).ok())
        .map(|lm| lm.with_timezone(&Utc).min(fetched_at))
        .unwrap_or(fetched_at)
}

impl UpstreamAdapter for FeedAdapter {
    fn domains(&self) -> &[Domain] {
        &[Domain::Inventory]
    }

    fn policy(&self) -> &UpstreamPolicy {
        &self.inner.policy
    }

    fn inventory_sync(&self) -> Option<Duration> {
        Some(self.inner.refresh_interval)
    }

    /// Reads the feed again (conditionally: a 304 answers the same snapshot).
    async fn inventory(&self) -> Result<Arc<InventorySnapshot>, AdapterError> {
        self.refresh().await
    }
}

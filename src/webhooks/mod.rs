//! Signed event webhooks out ([Standard Webhooks]): every `[webhooks.<id>]`
//! endpoint gets its dealerships' events as JSON POSTs with `webhook-id`,
//! `webhook-timestamp` and `webhook-signature`, from a durable cursor per
//! (endpoint, dealership) in the store. Per pair, events go in sequence order,
//! one at a time; pairs run side by side. Delivery is at least once: a
//! receiver drops repeats by `webhook-id`. This module also purges the event
//! log past `[events] retention`, keeping what an endpoint has yet to get.
//!
//! [Standard Webhooks]: https://www.standardwebhooks.com/

mod deliver;
mod endpoint;
mod purge;
mod redeliver;
mod signature;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

pub use endpoint::{Endpoint, Failure};
pub use redeliver::Redelivery;
pub use signature::sign;

use crate::config::{Config, ConfigError, EventsConfig};
use crate::store::leases::Leases;
use crate::store::{Store, StoreError, webhooks as cursors};
use crate::telemetry::metrics::{EndpointName, Metrics};

/// How often the undelivered-events gauge is brought up to date.
const GAUGE_REFRESH: Duration = Duration::from_secs(1);

/// Endpoint ids and the dealerships each covers.
type Covering = Arc<[(String, Vec<String>)]>;

/// Every configured endpoint and the event log's retention, before anything runs.
pub struct Webhooks {
    endpoints: Vec<Arc<Endpoint>>,
    events: EventsConfig,
    dealerships: Vec<String>,
}

/// Builds the endpoints (reading their secrets); problems go to `errors`.
pub fn build(config: &Config, base: &Path, errors: &mut Vec<ConfigError>) -> Webhooks {
    let endpoints = config
        .webhooks
        .iter()
        .filter_map(|(id, hook)| Endpoint::build(config, id, hook, base, errors))
        .map(Arc::new)
        .collect();
    Webhooks {
        endpoints,
        events: config.events.clone(),
        dealerships: config.dealerships.iter().map(|d| d.id.clone()).collect(),
    }
}

impl Webhooks {
    /// The endpoints as built (a reload takes their keys).
    pub fn endpoints(&self) -> &[Arc<Endpoint>] {
        &self.endpoints
    }

    /// What `/readyz` reports from.
    pub fn status(&self) -> Status {
        Status {
            endpoints: self.covering(),
            posting: self.endpoints.clone().into(),
        }
    }

    fn covering(&self) -> Covering {
        self.endpoints
            .iter()
            .map(|e| (e.id.clone(), e.dealerships.clone()))
            .collect()
    }

    /// Starts a deliverer per (endpoint, dealership), the purge and the
    /// gauge; the handle ends once all have stopped after `cancel`. Each
    /// pair's cursor is opened before this returns, so before the bridge
    /// serves: an endpoint new at this start begins at the head as it is
    /// now, never after events the first calls append while its deliverer
    /// gets a connection. Of the processes on one store, the holder of a
    /// pair's `webhook/<endpoint>/<dealership>` lease delivers its events,
    /// and the holder of `event_purge` purges.
    pub async fn spawn(
        self,
        store: Store,
        metrics: Arc<Metrics>,
        leases: &Leases,
        cancel: CancellationToken,
    ) -> JoinHandle<()> {
        let status = self.status();
        let mut tasks = JoinSet::new();
        for endpoint in &self.endpoints {
            for dealership in &endpoint.dealerships {
                let pair = deliver::Pair {
                    endpoint: endpoint.clone(),
                    dealership: dealership.clone(),
                    store: store.clone(),
                    metrics: metrics.clone(),
                    lease: leases
                        .take(&format!("webhook/{}/{dealership}", endpoint.id))
                        .await,
                };
                pair.prepare().await;
                tasks.spawn(pair.run(cancel.child_token()));
            }
        }
        let purger = purge::Purger {
            config: self.events,
            dealerships: self.dealerships,
            endpoints: status.endpoints.clone(),
            store: store.clone(),
            lease: leases.take("event_purge").await,
        };
        tasks.spawn(purger.run(cancel.child_token()));
        if !status.endpoints.is_empty() {
            tasks.spawn(status.refresh_gauge(store, metrics, cancel));
        }
        tokio::spawn(async move { while tasks.join_next().await.is_some() {} })
    }
}

/// Each endpoint's dealerships, to report its standing from the store.
#[derive(Clone, Default)]
pub struct Status {
    endpoints: Covering,
    /// The endpoints themselves, to post a dead letter again from the status page.
    posting: Arc<[Arc<Endpoint>]>,
}

/// An endpoint's standing over all its dealerships.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub endpoint: String,
    /// Events after its cursors, not yet delivered.
    pub undelivered: u64,
    /// Events it never took within `max_attempts`.
    pub dead_letters: u64,
    /// The class of the last failed attempt at an event still being retried.
    pub last_error: Option<String>,
}

impl Status {
    /// The running endpoints (a reload gives them new keys).
    pub fn endpoints(&self) -> &[Arc<Endpoint>] {
        &self.posting
    }

    /// Every endpoint's standing, in id order.
    pub async fn report(&self, store: &Store) -> Result<Vec<Report>, StoreError> {
        let mut reports = Vec::with_capacity(self.endpoints.len());
        for (endpoint, dealerships) in self.endpoints.iter() {
            let mut report = Report {
                endpoint: endpoint.clone(),
                undelivered: 0,
                dead_letters: 0,
                last_error: None,
            };
            for s in cursors::standing(store, endpoint).await? {
                if dealerships.contains(&s.dealership) {
                    report.undelivered += s.undelivered;
                    report.dead_letters += s.dead_letters;
                    report.last_error = report.last_error.or(s.last_error);
                }
            }
            reports.push(report);
        }
        Ok(reports)
    }

    async fn refresh_gauge(self, store: Store, metrics: Arc<Metrics>, cancel: CancellationToken) {
        loop {
            match self.report(&store).await {
                Ok(reports) => {
                    for r in reports {
                        metrics
                            .webhook_undelivered
                            .get_or_create(&EndpointName {
                                endpoint: r.endpoint,
                            })
                            .set(i64::try_from(r.undelivered).unwrap_or(i64::MAX));
                    }
                }
                Err(e) => tracing::warn!(error = %e, "Cannot read webhook cursors."),
            }
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(GAUGE_REFRESH) => {}
            }
        }
    }
}

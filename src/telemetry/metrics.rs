//! Prometheus metrics, one registry per gateway (so tests and replicas in one
//! process never share counters), exported at `/metrics`.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::door::Door;
use super::process::ProcessCollector;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CallLabels {
    pub tool: &'static str,
    /// The front door: `mcp`, `aap` or `kit`.
    pub door: &'static str,
    /// `ok` or the error code.
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ToolLabels {
    pub tool: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CacheLabels {
    pub tool: &'static str,
    /// `hit` or `miss`.
    pub result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamLabels {
    pub upstream: String,
    /// `ok`, or the failure class (`unavailable`, `timeout`, `rate_limited`, …).
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamName {
    pub upstream: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RateLimitLabels {
    /// `token`, `tool_class`, `anonymous` or `upstream`.
    pub scope: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DeliveryLabels {
    pub upstream: String,
    /// `delivered`, or the failure class.
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LeadLabels {
    /// `received`, `duplicate` or `replayed`.
    pub status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    /// The kind of record (`leads`, `lead_documents`, `audit`…), or of refusal.
    pub kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct MirrorSyncLabels {
    pub dealership: String,
    /// `ok`, `held_back` (the mass-removal guard), or the failure class.
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DealershipLabel {
    pub dealership: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WebhookLabels {
    pub endpoint: String,
    /// `delivered`, `retried` or `dead_lettered`.
    pub result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EndpointName {
    pub endpoint: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct InboundLabels {
    pub upstream: String,
    /// `accepted`, `duplicate`, `unauthorized`, `too_large`, `invalid`, or
    /// `failed` (the store could not record it; the vendor redelivers).
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BuildLabels {
    pub version: &'static str,
    /// The toolset version (TOOLSET.md).
    pub toolset: &'static str,
}

/// What the config names, so that every series a dashboard or an alert reads
/// exists (at zero) from the first scrape rather than from the first event:
/// `rate()` over a series that is missing says "no data", not "none".
#[derive(Debug, Default)]
pub struct Known {
    pub toolset: &'static str,
    pub tools: Vec<&'static str>,
    /// The tools whose answers the read cache keeps.
    pub cached_tools: Vec<&'static str>,
    pub upstreams: Vec<String>,
    /// Upstreams that receive leads.
    pub lead_upstreams: Vec<String>,
    /// Dealerships whose inventory is mirrored.
    pub mirrored: Vec<String>,
    /// Dealerships whose repair orders are watched.
    pub watched: Vec<String>,
    pub webhook_endpoints: Vec<String>,
    /// Upstreams that push events to the inbound endpoint.
    pub inbound_upstreams: Vec<String>,
}

/// Every metric the bridge exports.
pub struct Metrics {
    registry: Registry,
    /// The `process_*` families, which by convention carry no prefix.
    process: Registry,
    pub build_info: Family<BuildLabels, Gauge>,
    pub calls: Family<CallLabels, Counter>,
    pub call_duration: Family<ToolLabels, Histogram>,
    pub cache: Family<CacheLabels, Counter>,
    pub upstream_requests: Family<UpstreamLabels, Counter>,
    pub upstream_duration: Family<UpstreamName, Histogram>,
    pub rate_limited: Family<RateLimitLabels, Counter>,
    /// 0 closed, 1 half-open, 2 open.
    pub circuit_state: Family<UpstreamName, Gauge>,
    pub audit_dropped: Counter,
    /// Quota checks decided by the local share because Redis (`[quotas]`) did not answer.
    pub quota_fallbacks: Counter,
    pub leads: Family<LeadLabels, Counter>,
    pub lead_deliveries: Family<DeliveryLabels, Counter>,
    pub mirror_syncs: Family<MirrorSyncLabels, Counter>,
    /// Listed units in each dealership's mirror.
    pub mirror_units: Family<DealershipLabel, Gauge>,
    /// Vehicle events recorded by mirror syncs.
    pub mirror_events: Family<DealershipLabel, Counter>,
    /// Background reads of repair orders (`[events] repair_order_watch`), by outcome.
    pub repair_order_watch: Family<MirrorSyncLabels, Counter>,
    pub webhook_deliveries: Family<WebhookLabels, Counter>,
    /// Events after each webhook endpoint's cursors.
    pub webhook_undelivered: Family<EndpointName, Gauge>,
    /// Events vendors pushed to `/events/inbound/<upstream>`, by outcome.
    pub inbound_events: Family<InboundLabels, Counter>,
    /// Rows the retention purge removed (or, for lead details, minimised).
    pub retention_purged: Family<KindLabel, Counter>,
    /// Rows the background rotation resealed under the current key.
    pub resealed: Family<KindLabel, Counter>,
    /// Requests refused at the front door, by reason class.
    pub refusals: Family<KindLabel, Counter>,
}

/// Creates a family's series at zero if it is not there yet.
fn touch<S, M, C>(family: &Family<S, M, C>, labels: &S)
where
    S: Clone + std::hash::Hash + Eq,
    C: MetricConstructor<M>,
{
    let _created = family.get_or_create(labels);
}

fn latency_histogram() -> Histogram {
    // 100 µs … ~52 s.
    Histogram::new(exponential_buckets(0.0001, 2.0, 20))
}

impl Metrics {
    pub fn new() -> Arc<Self> {
        let mut registry = Registry::with_prefix("dms_bridge");
        let mut process = Registry::default();
        process.register_collector(Box::new(ProcessCollector));
        let build_info = Family::<BuildLabels, Gauge>::default();
        registry.register(
            "build_info",
            "The running build: 1, with its version and toolset version as labels",
            build_info.clone(),
        );
        let calls = Family::<CallLabels, Counter>::default();
        let call_duration = Family::<ToolLabels, Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        let cache = Family::<CacheLabels, Counter>::default();
        let upstream_requests = Family::<UpstreamLabels, Counter>::default();
        let upstream_duration = Family::<UpstreamName, Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        let rate_limited = Family::<RateLimitLabels, Counter>::default();
        let circuit_state = Family::<UpstreamName, Gauge>::default();
        let audit_dropped = Counter::default();
        let quota_fallbacks = Counter::default();
        let leads = Family::<LeadLabels, Counter>::default();
        let lead_deliveries = Family::<DeliveryLabels, Counter>::default();
        let webhook_deliveries = Family::<WebhookLabels, Counter>::default();
        let webhook_undelivered = Family::<EndpointName, Gauge>::default();
        registry.register(
            "webhook_deliveries",
            "Webhook POSTs by endpoint and result (delivered, retried, dead_lettered)",
            webhook_deliveries.clone(),
        );
        registry.register(
            "webhook_undelivered_events",
            "Events after a webhook endpoint's cursors, not yet delivered",
            webhook_undelivered.clone(),
        );
        registry.register(
            "leads",
            "Leads accepted by leads.create, by status",
            leads.clone(),
        );
        registry.register(
            "lead_delivery_attempts",
            "Lead delivery attempts to CRM intakes, by upstream and outcome",
            lead_deliveries.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls by tool, front door (mcp, aap, kit) and outcome (ok or error code)",
            calls.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "Tool call latency",
            call_duration.clone(),
        );
        registry.register(
            "cache_lookups",
            "Read-cache lookups by tool and result",
            cache.clone(),
        );
        registry.register(
            "upstream_requests",
            "Upstream HTTP requests by upstream and outcome",
            upstream_requests.clone(),
        );
        registry.register(
            "upstream_request_duration_seconds",
            "Upstream request latency",
            upstream_duration.clone(),
        );
        registry.register(
            "rate_limited",
            "Calls refused or delayed past their bound by a quota",
            rate_limited.clone(),
        );
        registry.register(
            "circuit_state",
            "Upstream circuit breaker: 0 closed, 1 half-open, 2 open",
            circuit_state.clone(),
        );
        registry.register(
            "audit_dropped",
            "Audit records that could not be written",
            audit_dropped.clone(),
        );
        registry.register(
            "quota_fallbacks",
            "Quota checks decided by this replica's local share because the shared quota store did not answer",
            quota_fallbacks.clone(),
        );
        let mirror_syncs = Family::<MirrorSyncLabels, Counter>::default();
        let mirror_units = Family::<DealershipLabel, Gauge>::default();
        let mirror_events = Family::<DealershipLabel, Counter>::default();
        registry.register(
            "mirror_syncs",
            "Inventory mirror reads by dealership and outcome",
            mirror_syncs.clone(),
        );
        registry.register(
            "mirror_units",
            "Listed units in each dealership's inventory mirror",
            mirror_units.clone(),
        );
        registry.register(
            "mirror_events",
            "Vehicle events recorded by inventory mirror reads",
            mirror_events.clone(),
        );
        let repair_order_watch = Family::<MirrorSyncLabels, Counter>::default();
        registry.register(
            "repair_order_watch",
            "Background repair-order reads by dealership and outcome",
            repair_order_watch.clone(),
        );
        let inbound_events = Family::<InboundLabels, Counter>::default();
        registry.register(
            "inbound_events",
            "Vendor events pushed to the inbound endpoint, by upstream and outcome",
            inbound_events.clone(),
        );
        let retention_purged = Family::<KindLabel, Counter>::default();
        registry.register(
            "retention_purged_rows",
            "Rows removed by the retention purge, by kind of record",
            retention_purged.clone(),
        );
        let resealed = Family::<KindLabel, Counter>::default();
        registry.register(
            "resealed_rows",
            "Rows resealed under the current key by the background rotation, by table",
            resealed.clone(),
        );
        let refusals = Family::<KindLabel, Counter>::default();
        registry.register(
            "front_door_refusals",
            "Requests refused at the front door (security events), by reason class",
            refusals.clone(),
        );
        Arc::new(Self {
            registry,
            retention_purged,
            resealed,
            refusals,
            process,
            build_info,
            inbound_events,
            mirror_syncs,
            mirror_units,
            mirror_events,
            repair_order_watch,
            calls,
            call_duration,
            cache,
            upstream_requests,
            upstream_duration,
            rate_limited,
            circuit_state,
            audit_dropped,
            quota_fallbacks,
            leads,
            lead_deliveries,
            webhook_deliveries,
            webhook_undelivered,
        })
    }

    /// Creates at zero the series of everything `known` names (see [`Known`]).
    pub fn seed(&self, known: &Known) {
        let build = BuildLabels {
            version: env!("CARGO_PKG_VERSION"),
            toolset: known.toolset,
        };
        self.build_info.get_or_create(&build).set(1);
        for &tool in &known.tools {
            touch(
                &self.calls,
                &CallLabels {
                    tool,
                    door: Door::Mcp.as_str(),
                    outcome: "ok",
                },
            );
            touch(&self.call_duration, &ToolLabels { tool });
        }
        for &tool in &known.cached_tools {
            for result in ["hit", "miss"] {
                touch(&self.cache, &CacheLabels { tool, result });
            }
        }
        for upstream in &known.upstreams {
            let outcome = "ok";
            let upstream = upstream.clone();
            touch(
                &self.upstream_requests,
                &UpstreamLabels {
                    upstream: upstream.clone(),
                    outcome,
                },
            );
            touch(
                &self.upstream_duration,
                &UpstreamName {
                    upstream: upstream.clone(),
                },
            );
            touch(&self.circuit_state, &UpstreamName { upstream });
        }
        for scope in ["token", "tool_class", "anonymous", "upstream"] {
            touch(&self.rate_limited, &RateLimitLabels { scope });
        }
        for status in ["received", "duplicate", "merged", "replayed"] {
            touch(&self.leads, &LeadLabels { status });
        }
        for upstream in &known.lead_upstreams {
            let outcome = "delivered";
            touch(
                &self.lead_deliveries,
                &DeliveryLabels {
                    upstream: upstream.clone(),
                    outcome,
                },
            );
        }
        for dealership in &known.mirrored {
            let outcome = "ok";
            touch(
                &self.mirror_syncs,
                &MirrorSyncLabels {
                    dealership: dealership.clone(),
                    outcome,
                },
            );
            touch(
                &self.mirror_units,
                &DealershipLabel {
                    dealership: dealership.clone(),
                },
            );
            touch(
                &self.mirror_events,
                &DealershipLabel {
                    dealership: dealership.clone(),
                },
            );
        }
        for dealership in &known.watched {
            let outcome = "ok";
            touch(
                &self.repair_order_watch,
                &MirrorSyncLabels {
                    dealership: dealership.clone(),
                    outcome,
                },
            );
        }
        for endpoint in &known.webhook_endpoints {
            let endpoint = endpoint.clone();
            touch(
                &self.webhook_deliveries,
                &WebhookLabels {
                    endpoint: endpoint.clone(),
                    result: "delivered",
                },
            );
            touch(&self.webhook_undelivered, &EndpointName { endpoint });
        }
        for upstream in &known.inbound_upstreams {
            let outcome = "accepted";
            touch(
                &self.inbound_events,
                &InboundLabels {
                    upstream: upstream.clone(),
                    outcome,
                },
            );
        }
    }

    pub fn record_call(
        &self,
        tool: &'static str,
        door: Door,
        outcome: &'static str,
        elapsed: Duration,
    ) {
        self.calls
            .get_or_create(&CallLabels {
                tool,
                door: door.as_str(),
                outcome,
            })
            .inc();
        self.call_duration
            .get_or_create(&ToolLabels { tool })
            .observe(elapsed.as_secs_f64());
    }

    pub fn record_lead_delivery(&self, upstream: &str, outcome: &'static str) {
        self.lead_deliveries
            .get_or_create(&DeliveryLabels {
                upstream: upstream.to_owned(),
                outcome,
            })
            .inc();
    }

    pub fn record_webhook(&self, endpoint: &str, result: &'static str) {
        self.webhook_deliveries
            .get_or_create(&WebhookLabels {
                endpoint: endpoint.to_owned(),
                result,
            })
            .inc();
    }

    pub fn record_inbound(&self, upstream: &str, outcome: &'static str) {
        self.inbound_events
            .get_or_create(&InboundLabels {
                upstream: upstream.to_owned(),
                outcome,
            })
            .inc();
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        use prometheus_client::encoding::text::{encode_eof, encode_registry};
        let mut out = String::new();
        let encoded = encode_registry(&mut out, &self.registry)
            .and_then(|()| encode_registry(&mut out, &self.process))
            .and_then(|()| encode_eof(&mut out));
        if encoded.is_err() {
            tracing::error!("Could not encode metrics.");
        }
        out
    }
}

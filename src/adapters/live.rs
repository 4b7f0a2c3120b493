//! One upstream instance for one dealership, as the rest of the bridge holds
//! it. Its kind (the REST, feed, ADF or SOAP adapter with its credentials) can
//! be replaced while the bridge runs, on a reload: a call in flight keeps the
//! kind it started with, and the next call, outbox attempt or mirror read
//! takes the new one. Its policy (quota, circuit) and domains stay.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use chrono::{DateTime, Utc};

use super::resilience::UpstreamPolicy;
use super::{
    AdapterError, AdapterKind, Booking, BookingRequest, CancelRequest, DeliveryReceipt,
    InventorySnapshot, LeadDelivery, RepairOrder, RoQuery, RoRef, ServiceItem, Slot, SlotRequest,
    TradeValueRequest, UpstreamAdapter, Valuation,
};
use super::{BuildError, DealershipContext, UpstreamInstance};
use crate::config::UpstreamConfig;
use crate::model::Domain;
use crate::model::crm::CrmStatus;

/// An upstream instance whose kind a reload can replace.
pub struct Adapter {
    current: ArcSwap<AdapterKind>,
    domains: Vec<Domain>,
    policy: Arc<UpstreamPolicy>,
}

/// A replacement serving other domains than the instance it would replace
/// (a change of kind or profile, which needs a restart).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherDomains;

impl Adapter {
    /// Builds the kind `config` names for one dealership (see [`AdapterKind::build`]).
    pub fn build(
        instance: &UpstreamInstance<'_>,
        dealership: &DealershipContext,
        config: &UpstreamConfig,
        base: &Path,
    ) -> Result<Self, Vec<BuildError>> {
        AdapterKind::build(instance, dealership, config, base)
            .map(|kind| Self::new(kind, instance.policy.clone()))
    }

    /// `policy`: the upstream's, shared by every dealership routed to it.
    pub fn new(kind: AdapterKind, policy: Arc<UpstreamPolicy>) -> Self {
        Self {
            domains: kind.domains().to_vec(),
            current: ArcSwap::from_pointee(kind),
            policy,
        }
    }

    /// The upstream's policy, for building a replacement that keeps it.
    pub fn shared_policy(&self) -> Arc<UpstreamPolicy> {
        self.policy.clone()
    }

    /// Whether `next` can take this instance's place (it serves the same domains).
    pub fn fits(&self, next: &AdapterKind) -> Result<(), OtherDomains> {
        if next.domains() == self.domains.as_slice() {
            Ok(())
        } else {
            Err(OtherDomains)
        }
    }

    /// Every call from now on goes to `next`; see [`Self::fits`] first.
    pub fn replace(&self, next: AdapterKind) {
        self.current.store(Arc::new(next));
    }

    fn kind(&self) -> Arc<AdapterKind> {
        self.current.load_full()
    }
}

impl UpstreamAdapter for Adapter {
    fn domains(&self) -> &[Domain] {
        &self.domains
    }

    fn policy(&self) -> &UpstreamPolicy {
        &self.policy
    }

    fn inventory_sync(&self) -> Option<Duration> {
        self.kind().inventory_sync()
    }

    async fn inventory(&self) -> Result<Arc<InventorySnapshot>, AdapterError> {
        self.kind().inventory().await
    }

    fn inventory_delta(&self) -> Option<Duration> {
        self.kind().inventory_delta()
    }

    async fn inventory_changes(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Option<Arc<InventorySnapshot>>, AdapterError> {
        self.kind().inventory_changes(since).await
    }

    async fn trade_value(
        &self,
        request: &TradeValueRequest<'_>,
    ) -> Result<Option<Valuation>, AdapterError> {
        self.kind().trade_value(request).await
    }

    async fn service_menu(&self) -> Result<Vec<ServiceItem>, AdapterError> {
        self.kind().service_menu().await
    }

    async fn service_slots(&self, request: &SlotRequest<'_>) -> Result<Vec<Slot>, AdapterError> {
        self.kind().service_slots(request).await
    }

    async fn repair_orders(&self, query: &RoQuery<'_>) -> Result<Vec<RepairOrder>, AdapterError> {
        self.kind().repair_orders(query).await
    }

    async fn repair_order(&self, which: RoRef<'_>) -> Result<Option<RepairOrder>, AdapterError> {
        self.kind().repair_order(which).await
    }

    async fn book_appointment(
        &self,
        request: &BookingRequest<'_>,
    ) -> Result<Booking, AdapterError> {
        self.kind().book_appointment(request).await
    }

    async fn cancel_appointment(&self, request: &CancelRequest<'_>) -> Result<(), AdapterError> {
        self.kind().cancel_appointment(request).await
    }

    fn lead_channel(&self) -> Option<&'static str> {
        self.kind().lead_channel()
    }

    async fn deliver_lead(&self, lead: &LeadDelivery<'_>) -> Result<DeliveryReceipt, AdapterError> {
        self.kind().deliver_lead(lead).await
    }

    fn reads_lead_status(&self) -> bool {
        self.kind().reads_lead_status()
    }

    async fn lead_status(&self, crm_lead_id: &str) -> Result<Option<CrmStatus>, AdapterError> {
        self.kind().lead_status(crm_lead_id).await
    }
}

//! Adapter kinds: a closed set owned by the project, one trait, one enum.
//! Per-dealership instances are data (config + `adapters/` profiles + `mappings/`).

pub mod adf;
mod build_error;
mod caller_error;
mod context;
mod error;
pub mod feed;
mod flight;
pub mod http;
pub mod mapping;
pub mod resilience;
pub mod rest;
pub mod search_index;
mod shared_repair_orders;
mod snapshot;
pub mod soap;
pub mod template;

use std::future::Future;
use std::sync::Arc;

pub use adf::{AdfSink, DeliveryReceipt, LeadDelivery};
pub use build_error::BuildError;
pub use context::DealershipContext;
pub use error::{AdapterError, ErrorClass};
// The canonical types adapters answer in live in `model`; re-exported as the
// vocabulary of the adapter trait.
pub use crate::model::repair_order::{RepairOrder, RoQuery, RoRef, RoStatus};
pub use crate::model::service::{
    BookedStatus, Booking, BookingRequest, CancelRequest, ServiceItem, Slot, SlotRequest,
};
pub use crate::model::valuation::{TradeValueRequest, Valuation};
pub use snapshot::{InventorySnapshot, Lookup, SoldUnit, UnitRef};

use crate::model::Domain;

use self::resilience::UpstreamPolicy;

/// An upstream instance being built: its config id and its policy, shared by
/// every dealership routed to it (one quota per upstream, not per route).
pub struct UpstreamInstance<'a> {
    pub name: &'a str,
    pub policy: Arc<UpstreamPolicy>,
}

/// What every adapter kind offers the dispatch pipeline.
pub trait UpstreamAdapter {
    /// Domains this instance can serve.
    fn domains(&self) -> &[Domain];

    /// Quota, retries and circuit breaker of this upstream.
    fn policy(&self) -> &UpstreamPolicy;

    /// How often the inventory mirror reads this upstream's inventory;
    /// `None`: inventory reads go through to the upstream on every cache miss.
    fn inventory_sync(&self) -> Option<std::time::Duration> {
        None
    }

    /// The dealership's current inventory.
    fn inventory(
        &self,
    ) -> impl Future<Output = Result<Arc<InventorySnapshot>, AdapterError>> + Send;

    /// Where the upstream answers changes-since reads ([`Self::inventory_changes`]):
    /// how often a full read must still be made.
    fn inventory_delta(&self) -> Option<std::time::Duration> {
        None
    }

    /// The units changed since `since` (removed ones among `sold`); `None`
    /// when the upstream offers no such read.
    fn inventory_changes(
        &self,
        _since: chrono::DateTime<chrono::Utc>,
    ) -> impl Future<Output = Result<Option<Arc<InventorySnapshot>>, AdapterError>> + Send {
        async { Ok(None) }
    }

    /// A trade-in valuation; `None` when the provider has no data for the vehicle.
    fn trade_value(
        &self,
        _request: &TradeValueRequest<'_>,
    ) -> impl Future<Output = Result<Option<Valuation>, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }

    /// The dealership's service menu.
    fn service_menu(&self) -> impl Future<Output = Result<Vec<ServiceItem>, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }

    /// Open service slots.
    fn service_slots(
        &self,
        _request: &SlotRequest<'_>,
    ) -> impl Future<Output = Result<Vec<Slot>, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }

    /// Repair orders answering `query`.
    fn repair_orders(
        &self,
        _query: &RoQuery<'_>,
    ) -> impl Future<Output = Result<Vec<RepairOrder>, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }

    /// One repair order; `None` when the DMS has no such order.
    fn repair_order(
        &self,
        _which: RoRef<'_>,
    ) -> impl Future<Output = Result<Option<RepairOrder>, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }

    /// Books a service appointment (one attempt: a booking is not retried blindly).
    fn book_appointment(
        &self,
        _request: &BookingRequest<'_>,
    ) -> impl Future<Output = Result<Booking, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }

    /// Cancels a service appointment.
    fn cancel_appointment(
        &self,
        _request: &CancelRequest<'_>,
    ) -> impl Future<Output = Result<(), AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }

    /// Hands one lead to the dealership's CRM (one attempt; the outbox retries).
    /// Only lead sinks can.
    fn deliver_lead(
        &self,
        _lead: &LeadDelivery<'_>,
    ) -> impl Future<Output = Result<DeliveryReceipt, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }
}

/// The closed set of adapter kinds.
pub enum Adapter {
    Rest(Box<rest::RestAdapter>),
    Feed(feed::FeedAdapter),
    Adf(AdfSink),
    Soap(Box<soap::SoapAdapter>),
}

impl Adapter {
    /// For lead sinks, the channel shown in a lead's delivery state.
    pub fn lead_channel(&self) -> Option<&'static str> {
        match self {
            Self::Adf(a) => Some(a.channel()),
            Self::Rest(_) | Self::Feed(_) | Self::Soap(_) => None,
        }
    }
}

impl UpstreamAdapter for Adapter {
    fn domains(&self) -> &[Domain] {
        match self {
            Self::Rest(a) => a.domains(),
            Self::Feed(a) => a.domains(),
            Self::Adf(a) => a.domains(),
            Self::Soap(a) => a.domains(),
        }
    }

    fn policy(&self) -> &UpstreamPolicy {
        match self {
            Self::Rest(a) => a.policy(),
            Self::Feed(a) => a.policy(),
            Self::Adf(a) => a.policy(),
            Self::Soap(a) => a.policy(),
        }
    }

    fn inventory_sync(&self) -> Option<std::time::Duration> {
        match self {
            Self::Rest(a) => a.inventory_sync(),
            Self::Feed(a) => a.inventory_sync(),
            Self::Adf(_) | Self::Soap(_) => None,
        }
    }

    async fn inventory(&self) -> Result<Arc<InventorySnapshot>, AdapterError> {
        match self {
            Self::Rest(a) => a.inventory().await,
            Self::Feed(a) => a.inventory().await,
            Self::Adf(_) | Self::Soap(_) => Err(AdapterError::Unsupported),
        }
    }

    fn inventory_delta(&self) -> Option<std::time::Duration> {
        match self {
            Self::Rest(a) => a.inventory_delta(),
            Self::Feed(_) | Self::Adf(_) | Self::Soap(_) => None,
        }
    }

    async fn inventory_changes(
        &self,
        since: chrono::DateTime<chrono::Utc>,
    ) -> Result<Option<Arc<InventorySnapshot>>, AdapterError> {
        match self {
            Self::Rest(a) => a.inventory_changes(since).await,
            Self::Feed(_) | Self::Adf(_) | Self::Soap(_) => Ok(None),
        }
    }

    async fn trade_value(
        &self,
        request: &TradeValueRequest<'_>,
    ) -> Result<Option<Valuation>, AdapterError> {
        match self {
            Self::Rest(a) => a.trade_value(request).await,
            Self::Feed(_) | Self::Adf(_) | Self::Soap(_) => Err(AdapterError::Unsupported),
        }
    }

    async fn service_menu(&self) -> Result<Vec<ServiceItem>, AdapterError> {
        match self {
            Self::Rest(a) => a.service_menu().await,
            Self::Feed(_) | Self::Adf(_) | Self::Soap(_) => Err(AdapterError::Unsupported),
        }
    }

    async fn service_slots(&self, request: &SlotRequest<'_>) -> Result<Vec<Slot>, AdapterError> {
        match self {
            Self::Rest(a) => a.service_slots(request).await,
            Self::Feed(_) | Self::Adf(_) | Self::Soap(_) => Err(AdapterError::Unsupported),
        }
    }

    async fn repair_orders(&self, query: &RoQuery<'_>) -> Result<Vec<RepairOrder>, AdapterError> {
        match self {
            Self::Rest(a) => a.repair_orders(query).await,
            Self::Soap(a) => a.repair_orders(query).await,
            Self::Feed(_) | Self::Adf(_) => Err(AdapterError::Unsupported),
        }
    }

    async fn book_appointment(
        &self,
        request: &BookingRequest<'_>,
    ) -> Result<Booking, AdapterError> {
        match self {
            Self::Rest(a) => a.book_appointment(request).await,
            Self::Feed(_) | Self::Adf(_) | Self::Soap(_) => Err(AdapterError::Unsupported),
        }
    }

    async fn repair_order(&self, which: RoRef<'_>) -> Result<Option<RepairOrder>, AdapterError> {
        match self {
            Self::Rest(a) => a.repair_order(which).await,
            Self::Soap(a) => a.repair_order(which).await,
            Self::Feed(_) | Self::Adf(_) => Err(AdapterError::Unsupported),
        }
    }

    async fn cancel_appointment(&self, request: &CancelRequest<'_>) -> Result<(), AdapterError> {
        match self {
            Self::Rest(a) => a.cancel_appointment(request).await,
            Self::Feed(_) | Self::Adf(_) | Self::Soap(_) => Err(AdapterError::Unsupported),
        }
    }

    async fn deliver_lead(&self, lead: &LeadDelivery<'_>) -> Result<DeliveryReceipt, AdapterError> {
        match self {
            Self::Adf(a) => a.deliver(lead).await,
            Self::Rest(_) | Self::Feed(_) | Self::Soap(_) => Err(AdapterError::Unsupported),
        }
    }
}

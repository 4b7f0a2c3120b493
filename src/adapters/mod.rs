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
mod live;
pub mod mapping;
pub mod resilience;
pub mod rest;
pub mod search_index;
mod shared_repair_orders;
mod snapshot;
pub mod soap;
pub mod standing;
pub mod template;

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

pub use adf::{AdfSink, DeliveryReceipt, LeadDelivery};
pub use build_error::BuildError;
pub use context::DealershipContext;
pub use error::{AdapterError, ErrorClass};
pub use live::Adapter;
// The canonical types adapters answer in live in `model`; re-exported as the
// vocabulary of the adapter trait.
pub use crate::model::repair_order::{RepairOrder, RoQuery, RoRef, RoStatus};
pub use crate::model::service::{
    BookedStatus, Booking, BookingRequest, CancelRequest, ServiceItem, Slot, SlotRequest,
};
pub use crate::model::valuation::{TradeValueRequest, Valuation};
pub use snapshot::{InventorySnapshot, Lookup, SoldUnit, UnitRef};

use crate::config::UpstreamConfig;
use crate::model::Domain;
use crate::model::crm::CrmStatus;

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
    fn inventory_sync(&self) -> Option<Duration> {
        None
    }

    /// The dealership's current inventory.
    fn inventory(
        &self,
    ) -> impl Future<Output = Result<Arc<InventorySnapshot>, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }

    /// Where the upstream answers changes-since reads ([`Self::inventory_changes`]):
    /// how often a full read must still be made.
    fn inventory_delta(&self) -> Option<Duration> {
        None
    }

    /// The units changed since `since` (removed ones among `sold`); `None`
    /// when the upstream offers no such read.
    fn inventory_changes(
        &self,
        _since: DateTime<Utc>,
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

    /// For lead sinks, the channel shown in a lead's delivery state.
    fn lead_channel(&self) -> Option<&'static str> {
        None
    }

    /// Hands one lead to the dealership's CRM (one attempt; the outbox retries).
    /// Only lead sinks can.
    fn deliver_lead(
        &self,
        _lead: &LeadDelivery<'_>,
    ) -> impl Future<Output = Result<DeliveryReceipt, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }

    /// Whether [`Self::lead_status`] can say what became of a delivered lead.
    fn reads_lead_status(&self) -> bool {
        false
    }

    /// What the CRM says became of its lead `crm_lead_id` (the delivery's
    /// receipt); `None` when the CRM does not know it.
    fn lead_status(
        &self,
        _crm_lead_id: &str,
    ) -> impl Future<Output = Result<Option<CrmStatus>, AdapterError>> + Send {
        async { Err(AdapterError::Unsupported) }
    }
}

/// Lists the kinds once and writes the enum and its trait impl from that list:
/// each method goes to the kind's own impl, whose defaults answer what the
/// kind does not offer. A new trait method is forwarded here once, for all kinds.
macro_rules! adapter_kinds {
    ($($(#[$doc:meta])* $kind:ident($inner:ty),)+) => {
        /// The closed set of adapter kinds.
        pub enum AdapterKind {
            $($(#[$doc])* $kind($inner),)+
        }

        impl UpstreamAdapter for AdapterKind {
            fn domains(&self) -> &[Domain] {
                match self { $(Self::$kind(a) => a.domains(),)+ }
            }

            fn policy(&self) -> &UpstreamPolicy {
                match self { $(Self::$kind(a) => a.policy(),)+ }
            }

            fn inventory_sync(&self) -> Option<Duration> {
                match self { $(Self::$kind(a) => a.inventory_sync(),)+ }
            }

            async fn inventory(&self) -> Result<Arc<InventorySnapshot>, AdapterError> {
                match self { $(Self::$kind(a) => a.inventory().await,)+ }
            }

            fn inventory_delta(&self) -> Option<Duration> {
                match self { $(Self::$kind(a) => a.inventory_delta(),)+ }
            }

            async fn inventory_changes(
                &self,
                since: DateTime<Utc>,
            ) -> Result<Option<Arc<InventorySnapshot>>, AdapterError> {
                match self { $(Self::$kind(a) => a.inventory_changes(since).await,)+ }
            }

            async fn trade_value(
                &self,
                request: &TradeValueRequest<'_>,
            ) -> Result<Option<Valuation>, AdapterError> {
                match self { $(Self::$kind(a) => a.trade_value(request).await,)+ }
            }

            async fn service_menu(&self) -> Result<Vec<ServiceItem>, AdapterError> {
                match self { $(Self::$kind(a) => a.service_menu().await,)+ }
            }

            async fn service_slots(
                &self,
                request: &SlotRequest<'_>,
            ) -> Result<Vec<Slot>, AdapterError> {
                match self { $(Self::$kind(a) => a.service_slots(request).await,)+ }
            }

            async fn repair_orders(
                &self,
                query: &RoQuery<'_>,
            ) -> Result<Vec<RepairOrder>, AdapterError> {
                match self { $(Self::$kind(a) => a.repair_orders(query).await,)+ }
            }

            async fn repair_order(
                &self,
                which: RoRef<'_>,
            ) -> Result<Option<RepairOrder>, AdapterError> {
                match self { $(Self::$kind(a) => a.repair_order(which).await,)+ }
            }

            async fn book_appointment(
                &self,
                request: &BookingRequest<'_>,
            ) -> Result<Booking, AdapterError> {
                match self { $(Self::$kind(a) => a.book_appointment(request).await,)+ }
            }

            async fn cancel_appointment(
                &self,
                request: &CancelRequest<'_>,
            ) -> Result<(), AdapterError> {
                match self { $(Self::$kind(a) => a.cancel_appointment(request).await,)+ }
            }

            fn lead_channel(&self) -> Option<&'static str> {
                match self { $(Self::$kind(a) => a.lead_channel(),)+ }
            }

            async fn deliver_lead(
                &self,
                lead: &LeadDelivery<'_>,
            ) -> Result<DeliveryReceipt, AdapterError> {
                match self { $(Self::$kind(a) => a.deliver_lead(lead).await,)+ }
            }

            fn reads_lead_status(&self) -> bool {
                match self { $(Self::$kind(a) => a.reads_lead_status(),)+ }
            }

            async fn lead_status(
                &self,
                crm_lead_id: &str,
            ) -> Result<Option<CrmStatus>, AdapterError> {
                match self { $(Self::$kind(a) => a.lead_status(crm_lead_id).await,)+ }
            }
        }
    };
}

// A new kind is its module, one line here and one arm in `AdapterKind::build`
// (besides its `UpstreamConfig` variant). The large kinds are boxed so the
// enum stays the size of the small ones.
adapter_kinds! {
    /// A REST/JSON API driven by a vendor profile.
    Rest(Box<rest::RestAdapter>),
    /// A CSV/TSV inventory feed.
    Feed(feed::FeedAdapter),
    /// A CRM's ADF lead intake, over HTTP or e-mail.
    Adf(AdfSink),
    /// A SOAP/XML web service driven by a SOAP profile.
    Soap(Box<soap::SoapAdapter>),
}

impl AdapterKind {
    /// Builds the kind `config` names for one dealership. No connection is
    /// made; every problem is reported, each at its key where it has one.
    pub fn build(
        instance: &UpstreamInstance<'_>,
        dealership: &DealershipContext,
        config: &UpstreamConfig,
        base: &Path,
    ) -> Result<Self, Vec<BuildError>> {
        match config {
            UpstreamConfig::Rest(rest) => {
                rest::RestAdapter::build(instance, dealership.clone(), rest, base)
                    .map(|a| Self::Rest(Box::new(a)))
            }
            UpstreamConfig::Feed(feed) => {
                feed::FeedAdapter::build(instance, dealership.clone(), feed, base).map(Self::Feed)
            }
            UpstreamConfig::Soap(soap) => {
                soap::SoapAdapter::build(instance, dealership.clone(), soap, base)
                    .map(|a| Self::Soap(Box::new(a)))
            }
            UpstreamConfig::AdfHttp(http) => AdfSink::http(instance, http, base).map(Self::Adf),
            UpstreamConfig::AdfEmail(email) => AdfSink::email(instance, email, base).map(Self::Adf),
        }
    }
}

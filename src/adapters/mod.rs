//! Adapter kinds: a closed set owned by the project, one trait, one enum.
//! Per-dealership instances are data (config + `adapters/` profiles + `mappings/`).

pub mod catalog;
mod error;
pub mod feed;
pub mod http;
pub mod mapping;
pub mod rest;
mod snapshot;

use std::future::Future;
use std::sync::Arc;

pub use error::AdapterError;
pub use snapshot::{InventorySnapshot, Lookup, SoldUnit, UnitRef};

use crate::model::Domain;

/// What every adapter kind offers the dispatch pipeline.
pub trait UpstreamAdapter {
    /// Domains this instance can serve.
    fn domains(&self) -> &[Domain];

    /// The dealership's current inventory.
    fn inventory(
        &self,
    ) -> impl Future<Output = Result<Arc<InventorySnapshot>, AdapterError>> + Send;
}

/// The closed set of adapter kinds.
pub enum Adapter {
    Rest(Box<rest::RestAdapter>),
    Feed(feed::FeedAdapter),
}

impl Adapter {
    /// Short kind name for logs and audit records.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Rest(_) => "rest",
            Self::Feed(_) => "feed",
        }
    }
}

impl UpstreamAdapter for Adapter {
    fn domains(&self) -> &[Domain] {
        match self {
            Self::Rest(a) => a.domains(),
            Self::Feed(a) => a.domains(),
        }
    }

    async fn inventory(&self) -> Result<Arc<InventorySnapshot>, AdapterError> {
        match self {
            Self::Rest(a) => a.inventory().await,
            Self::Feed(a) => a.inventory().await,
        }
    }
}

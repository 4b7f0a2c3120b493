//! The retention purge: every `[retention] purge_interval`, each kind of
//! record past its retention, in batches of `[retention] batch` rows (one
//! short transaction each, with a pause between, so tool calls never wait
//! long), counted in `dms_bridge_retention_purged_rows`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::config::RetentionConfig;
use crate::store::leases::Lease;
use crate::store::{Store, StoreError, retention};
use crate::telemetry::metrics::{KindLabel, Metrics};

pub struct Purger {
    pub store: Store,
    pub retention: RetentionConfig,
    pub metrics: Arc<Metrics>,
}

/// A pause between batches, so tool calls get the store between them.
const BREATHE: Duration = Duration::from_millis(5);

/// The kinds of record, in the order they are purged (documents before the
/// leads that hold them, lead details before what proves consent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    LeadDocuments,
    Leads,
    ConsentGrants,
    Bookings,
    Audit,
    DepartedUnits,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::LeadDocuments,
        Kind::Leads,
        Kind::ConsentGrants,
        Kind::Bookings,
        Kind::Audit,
        Kind::DepartedUnits,
    ];

    /// Its `[retention]` key, and its label in the metric and the log.
    pub fn name(self) -> &'static str {
        match self {
            Kind::LeadDocuments => "lead_documents",
            Kind::Leads => "leads",
            Kind::ConsentGrants => "consent_grants",
            Kind::Bookings => "bookings",
            Kind::Audit => "audit",
            Kind::DepartedUnits => "departed_units",
        }
    }

    /// How long `retention` keeps this kind.
    fn kept(self, retention: &RetentionConfig) -> Duration {
        match self {
            Kind::LeadDocuments => retention.lead_documents,
            Kind::Leads => retention.leads,
            Kind::ConsentGrants => retention.consent_grants,
            Kind::Bookings => retention.bookings,
            Kind::Audit => retention.audit,
            Kind::DepartedUnits => retention.departed_units,
        }
    }
}

impl Purger {
    pub async fn run(self, lease: Lease, cancel: CancellationToken) {
        let mut due = super::Due::new(self.retention.purge_interval);
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                () = due.wait(&lease) => {}
            }
            match self.pass(Utc::now(), &cancel).await {
                Ok(purged) if purged.values().all(|n| *n == 0) => {}
                Ok(purged) => tracing::info!(?purged, "Purged records past their retention."),
                Err(e) => tracing::error!(error = %e, "Cannot purge records past their retention."),
            }
        }
    }

    /// Purges every kind once, as of `now`; returns the rows per kind.
    pub async fn pass(
        &self,
        now: DateTime<Utc>,
        cancel: &CancellationToken,
    ) -> Result<BTreeMap<&'static str, u64>, StoreError> {
        let mut purged = BTreeMap::new();
        for kind in Kind::ALL {
            let mut total = 0;
            loop {
                if cancel.is_cancelled() {
                    return Ok(purged);
                }
                let done = self.batch(kind, now).await?;
                total += done;
                self.metrics
                    .retention_purged
                    .get_or_create(&KindLabel { kind: kind.name() })
                    .inc_by(done);
                if done < u64::from(self.retention.batch) {
                    break;
                }
                tokio::time::sleep(BREATHE).await;
            }
            purged.insert(kind.name(), total);
        }
        Ok(purged)
    }

    async fn batch(&self, kind: Kind, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let kept =
            chrono::Duration::from_std(kind.kept(&self.retention)).unwrap_or(chrono::Duration::MAX);
        let before = now
            .checked_sub_signed(kept)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let (store, n) = (&self.store, self.retention.batch);
        match kind {
            Kind::LeadDocuments => retention::lead_documents(store, before, n).await,
            Kind::Leads => retention::minimise_leads(store, before, n, &super::minimise).await,
            Kind::ConsentGrants => retention::consent_grants(store, before, n).await,
            Kind::Bookings => retention::bookings(store, before, n).await,
            Kind::Audit => retention::audit(store, before, n).await,
            Kind::DepartedUnits => retention::departed_units(store, before, n).await,
        }
    }
}

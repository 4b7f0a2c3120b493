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
pub const KINDS: [&str; 6] = [
    "lead_documents",
    "leads",
    "consent_grants",
    "bookings",
    "audit",
    "departed_units",
];

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
        for kind in KINDS {
            let mut total = 0;
            loop {
                if cancel.is_cancelled() {
                    return Ok(purged);
                }
                let done = self.batch(kind, now).await?;
                total += done;
                self.metrics
                    .retention_purged
                    .get_or_create(&KindLabel { kind })
                    .inc_by(done);
                if done < u64::from(self.retention.batch) {
                    break;
                }
                tokio::time::sleep(BREATHE).await;
            }
            purged.insert(kind, total);
        }
        Ok(purged)
    }

    async fn batch(&self, kind: &str, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let r = &self.retention;
        let (store, n) = (&self.store, r.batch);
        let before = |kept: Duration| {
            now.checked_sub_signed(
                chrono::Duration::from_std(kept).unwrap_or(chrono::Duration::MAX),
            )
            .unwrap_or(DateTime::<Utc>::MIN_UTC)
        };
        match kind {
            "lead_documents" => retention::lead_documents(store, before(r.lead_documents), n).await,
            "leads" => retention::minimise_leads(store, before(r.leads), n, &super::minimise).await,
            "consent_grants" => retention::consent_grants(store, before(r.consent_grants), n).await,
            "bookings" => retention::bookings(store, before(r.bookings), n).await,
            "audit" => retention::audit(store, before(r.audit), n).await,
            "departed_units" => retention::departed_units(store, before(r.departed_units), n).await,
            _ => Ok(0),
        }
    }
}

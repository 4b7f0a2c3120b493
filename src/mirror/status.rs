//! What the mirror reports: each dealership's standing for `/readyz`, and
//! its metrics.

use chrono::{DateTime, Utc};

use super::{Dealership, Mirror};
use crate::telemetry::metrics::{DealershipLabel, MirrorSyncLabels};

/// Where one dealership's mirror stands, for `/readyz`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MirrorStatus {
    pub dealership: String,
    pub listed: usize,
    pub last_success_at: Option<DateTime<Utc>>,
    pub stale: bool,
    /// The last read's failure class, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<&'static str>,
    /// Units the last reads would remove, held back by the mass-removal guard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_back_removals: Option<usize>,
}

impl Mirror {
    /// Every mirror's state, for `/readyz`.
    pub fn status(&self) -> Vec<MirrorStatus> {
        self.inner
            .dealerships
            .values()
            .map(|d| {
                let state = d.read();
                let stale = state.last_success_at.is_none_or(|at| self.is_stale(at));
                MirrorStatus {
                    dealership: d.id.clone(),
                    listed: state.copy.as_ref().map_or(0, |c| c.listed.len()),
                    last_success_at: state.last_success_at,
                    stale,
                    last_error: state.last_error,
                    held_back_removals: state.held_back.map(|h| h.removals),
                }
            })
            .collect()
    }

    pub(super) fn count_events(&self, d: &Dealership, events: usize) {
        self.inner
            .metrics
            .mirror_events
            .get_or_create(&DealershipLabel {
                dealership: d.id.clone(),
            })
            .inc_by(events as u64);
    }

    pub(super) fn count_sync(&self, d: &Dealership, outcome: &'static str) {
        self.inner
            .metrics
            .mirror_syncs
            .get_or_create(&MirrorSyncLabels {
                dealership: d.id.clone(),
                outcome,
            })
            .inc();
    }

    pub(super) fn set_units_gauge(&self, d: &Dealership, listed: usize) {
        self.inner
            .metrics
            .mirror_units
            .get_or_create(&DealershipLabel {
                dealership: d.id.clone(),
            })
            .set(i64::try_from(listed).unwrap_or(i64::MAX));
    }
}

//! Everything the status page shows, read at one moment from the gateway,
//! the store and the webhook standing. The page module renders it.

use chrono::{DateTime, Utc};

use crate::adapters::UpstreamAdapter;
use crate::adapters::resilience::CircuitState;
use crate::adapters::standing::QuotaUse;
use crate::gateway::Gateway;
use crate::mirror::MirrorStatus;
use crate::store::StoreError;
use crate::store::operator::{self, DeadLetter, OutboxCount, Outcomes, TroubledDelivery};
use crate::webhooks::Report;

/// Rows shown of each long list; the counts above them cover every row.
pub const LIST_ROWS: u32 = 100;

/// How far back the tool-call outcomes go.
pub const OUTCOMES_SINCE: chrono::Duration = chrono::Duration::hours(1);

pub struct Snapshot {
    pub taken_at: DateTime<Utc>,
    pub dealerships: Vec<DealershipRow>,
    pub inventory: Vec<MirrorStatus>,
    pub outbox: Vec<OutboxCount>,
    pub troubled: Vec<TroubledDelivery>,
    pub webhooks: Vec<Report>,
    pub dead_letters: Vec<DeadLetter>,
    pub dead_letter_total: u64,
    pub outcomes: Vec<Outcomes>,
}

pub struct DealershipRow {
    pub id: String,
    pub name: String,
    pub routes: Vec<RouteRow>,
}

pub struct RouteRow {
    pub domain: &'static str,
    pub upstream: String,
    pub circuit: CircuitState,
    pub last_success: Option<DateTime<Utc>>,
    pub last_error: Option<(DateTime<Utc>, &'static str)>,
    pub quota: Option<QuotaUse>,
}

impl Snapshot {
    pub async fn take(
        gateway: &Gateway,
        webhooks: &crate::webhooks::Status,
    ) -> Result<Self, StoreError> {
        let store = gateway.store();
        let now = Utc::now();
        let (dead_letters, dead_letter_total) = operator::dead_letters(store, LIST_ROWS).await?;
        Ok(Self {
            taken_at: now,
            dealerships: gateway.dealerships().map(dealership_row).collect(),
            inventory: gateway.services().mirror.status(),
            outbox: operator::outbox_counts(store).await?,
            troubled: operator::troubled(store, LIST_ROWS).await?,
            webhooks: webhooks.report(store).await?,
            dead_letters,
            dead_letter_total,
            outcomes: operator::recent_outcomes(store, now - OUTCOMES_SINCE).await?,
        })
    }

    /// Undelivered leads with this standing, over every dealership and CRM.
    pub fn outbox_total(&self, standing: &str) -> u64 {
        self.outbox
            .iter()
            .filter(|c| c.standing == standing)
            .map(|c| c.count)
            .sum()
    }
}

fn dealership_row(d: &crate::tools::Dealership) -> DealershipRow {
    DealershipRow {
        id: d.profile.id.clone(),
        name: d.profile.name.clone(),
        routes: d
            .routes
            .iter()
            .map(|(domain, route)| {
                let policy = route.adapter.policy();
                let standing = policy.standing();
                RouteRow {
                    domain: domain.as_str(),
                    upstream: route.upstream.clone(),
                    circuit: policy.circuit(),
                    last_success: standing.last_success,
                    last_error: standing.last_error,
                    quota: standing.quota,
                }
            })
            .collect(),
    }
}

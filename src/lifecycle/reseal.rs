//! The background reseal: every table's rows not sealed with the current
//! key, in batches, from the start and then every purge interval; then each
//! key that seals no row any more is retired, so that it may leave the config.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::store::leases::Lease;
use crate::store::{Store, StoreError, reseal, sealing};
use crate::telemetry::metrics::{KindLabel, Metrics};

pub struct Resealer {
    pub store: Store,
    pub batch: u32,
    pub metrics: Arc<Metrics>,
}

/// A pause between batches, so tool calls get the store between them.
const BREATHE: Duration = Duration::from_millis(5);

impl Resealer {
    pub async fn run(self, lease: Lease, every: Duration, cancel: CancellationToken) {
        let mut due = super::Due::new(every);
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                () = due.wait(&lease) => {}
            }
            match self.pass(&cancel).await {
                Ok(0) => {}
                Ok(resealed) => {
                    tracing::info!(resealed, "Resealed customer data under the current key.")
                }
                Err(e) => tracing::error!(error = %e, "Cannot reseal customer data."),
            }
        }
    }

    /// Reseals every table once through; returns the rows resealed.
    pub async fn pass(&self, cancel: &CancellationToken) -> Result<u64, StoreError> {
        let legacy = |d: &str, r: &str| super::legacy_identity(d, r);
        let mut total = 0;
        for table in reseal::tables() {
            let mut after = String::new();
            loop {
                if cancel.is_cancelled() {
                    return Ok(total);
                }
                let (done, last) =
                    reseal::batch(&self.store, table, &after, self.batch, &legacy).await?;
                total += done;
                self.metrics
                    .resealed
                    .get_or_create(&KindLabel { kind: table })
                    .inc_by(done);
                match last {
                    Some(last) => after = last,
                    None => break,
                }
                tokio::time::sleep(BREATHE).await;
            }
        }
        self.retire_spent_keys().await?;
        Ok(total)
    }

    /// Retires the keys (other than the current one) no row is sealed with.
    async fn retire_spent_keys(&self) -> Result<(), StoreError> {
        let Some(keys) = self.store.sealing().keyring() else {
            return Ok(());
        };
        let counts = reseal::counts(&self.store).await?;
        for id in keys.ids() {
            let used = counts
                .values()
                .any(|by_key| by_key.get(&id).is_some_and(|n| *n > 0));
            if id != keys.current_id() && !used {
                sealing::retire(&self.store, &id).await?;
            }
        }
        Ok(())
    }
}

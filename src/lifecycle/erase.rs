//! Serving an erasure request: rows from before sealing are given their
//! contact hashes first (so none is missed), then the customer's records
//! are found, or found and erased in one transaction with a record of it.

use tokio_util::sync::CancellationToken;

use crate::store::erasure::{self, Erased, Found, Subject};
use crate::store::{Store, StoreError};
use crate::telemetry::metrics::Metrics;

/// What an erasure found and, unless it was a dry run, erased.
#[derive(Debug, serde::Serialize)]
pub struct Report {
    pub dry_run: bool,
    pub found: Found,
    pub erased: Option<Erased>,
}

/// Finds `subject`'s records and, unless `dry_run`, erases them.
pub async fn erase(
    store: &Store,
    subject: &Subject,
    requested_by: &str,
    reference: Option<&str>,
    dry_run: bool,
) -> Result<Report, StoreError> {
    if erasure::unhashed(store).await? > 0 {
        let resealer = super::reseal::Resealer {
            store: store.clone(),
            batch: 500,
            metrics: Metrics::new(),
        };
        resealer.pass(&CancellationToken::new()).await?;
    }
    if dry_run {
        let found = erasure::find(store, subject).await?;
        return Ok(Report {
            dry_run,
            found,
            erased: None,
        });
    }
    let (found, erased) = erasure::erase(store, subject, requested_by, reference).await?;
    Ok(Report {
        dry_run,
        found,
        erased: Some(erased),
    })
}

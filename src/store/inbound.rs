//! SQL for inbound vendor events (`migrations/*/0010`): the event ids received
//! per upstream, so a redelivery is recognised on any replica sharing the store.

use chrono::{DateTime, Utc};

use super::{Store, StoreError};

/// Records `event_id` from `upstream`; true when it is new, false when it
/// was received before.
pub async fn record(
    store: &Store,
    upstream: &str,
    event_id: &str,
    received_at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let _turn = store.write_turn().await;
    let done = sqlx::query(
        "INSERT INTO inbound_events (upstream, event_id, received_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING",
    )
    .bind(upstream)
    .bind(event_id)
    .bind(super::leads::ts(received_at))
    .execute(store.pool())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Forgets the ids received before `cutoff`. Returns how many went.
pub async fn purge(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    let _turn = store.write_turn().await;
    let done = sqlx::query("DELETE FROM inbound_events WHERE received_at < $1")
        .bind(super::leads::ts(cutoff))
        .execute(store.pool())
        .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn an_id_is_new_once_per_upstream_until_purged() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let long_ago = Utc::now() - chrono::Duration::days(40);
        assert!(record(&store, "cdk", "e1", long_ago).await.unwrap());
        assert!(!record(&store, "cdk", "e1", Utc::now()).await.unwrap());
        assert!(record(&store, "other", "e1", Utc::now()).await.unwrap());
        let cutoff = Utc::now() - chrono::Duration::days(30);
        assert_eq!(purge(&store, cutoff).await.unwrap(), 1);
        assert!(record(&store, "cdk", "e1", Utc::now()).await.unwrap());
    }
}

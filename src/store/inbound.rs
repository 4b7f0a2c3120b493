//! SQL for inbound vendor events (`migrations/*/0010`): the event ids received
//! per upstream, so a redelivery is recognised on any replica sharing the store.

use chrono::{DateTime, Utc};

use super::{Store, StoreError};

/// What the store knew of an inbound event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// Neither its id nor its body was seen: recorded now.
    New,
    /// Its id was received before (a redelivery).
    SeenId,
    /// Another id came with this very body before (a replay).
    SeenBody,
}

/// Records `event_id` from `upstream`, with the hash of its body.
pub async fn record(
    store: &Store,
    upstream: &str,
    event_id: &str,
    body_hash: &str,
    received_at: DateTime<Utc>,
) -> Result<Recorded, StoreError> {
    let _turn = store.write_turn().await;
    let done = sqlx::query(
        "INSERT INTO inbound_events (upstream, event_id, received_at, body_hash) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING",
    )
    .bind(upstream)
    .bind(event_id)
    .bind(super::ts(received_at))
    .bind(body_hash)
    .execute(store.pool())
    .await?;
    if done.rows_affected() == 1 {
        return Ok(Recorded::New);
    }
    let seen_id: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM inbound_events WHERE upstream = $1 AND event_id = $2",
    )
    .bind(upstream)
    .bind(event_id)
    .fetch_one(store.pool())
    .await?;
    Ok(if seen_id > 0 {
        Recorded::SeenId
    } else {
        Recorded::SeenBody
    })
}

/// Forgets the ids received before `cutoff`. Returns how many went.
pub async fn purge(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    let _turn = store.write_turn().await;
    let done = sqlx::query("DELETE FROM inbound_events WHERE received_at < $1")
        .bind(super::ts(cutoff))
        .execute(store.pool())
        .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn an_id_and_a_body_are_new_once_per_upstream_until_purged() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let long_ago = Utc::now() - chrono::Duration::days(40);
        let now = Utc::now();
        assert_eq!(
            record(&store, "cdk", "e1", "h1", long_ago).await.unwrap(),
            Recorded::New
        );
        assert_eq!(
            record(&store, "cdk", "e1", "h1", now).await.unwrap(),
            Recorded::SeenId
        );
        assert_eq!(
            record(&store, "cdk", "e2", "h1", now).await.unwrap(),
            Recorded::SeenBody
        );
        assert_eq!(
            record(&store, "other", "e1", "h1", now).await.unwrap(),
            Recorded::New
        );
        let cutoff = Utc::now() - chrono::Duration::days(30);
        assert_eq!(purge(&store, cutoff).await.unwrap(), 1);
        assert_eq!(
            record(&store, "cdk", "e1", "h1", now).await.unwrap(),
            Recorded::New
        );
    }
}

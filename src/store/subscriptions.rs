//! `resources/subscribe` over stateless HTTP (`migrations/*/0017`): the URIs
//! a principal subscribed to, read by whichever replica holds its `GET`
//! stream. Bounded: past [`MAX_PER_PRINCIPAL`] the oldest give way, since
//! clients may never unsubscribe (VS Code does not).

use chrono::{DateTime, SecondsFormat, Utc};

use super::{Store, StoreError};

/// Most subscriptions one principal keeps (as many as one `subscriptions/listen` names).
pub const MAX_PER_PRINCIPAL: i64 = 256;

/// One subscription: updates are told for events after `after_sequence`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    pub uri: String,
    pub after_sequence: u64,
}

/// Records `principal`'s subscription to `uri`, watched from the event
/// `after_sequence` (again: nothing changes).
pub async fn add(
    store: &Store,
    principal: &str,
    subscription: &Subscription,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query(
        "INSERT INTO resource_subscriptions (principal, uri, after_sequence, created_at)
         VALUES ($1, $2, $3, $4) ON CONFLICT (principal, uri) DO NOTHING",
    )
    .bind(principal)
    .bind(&subscription.uri)
    .bind(i64::try_from(subscription.after_sequence).unwrap_or(i64::MAX))
    .bind(now.to_rfc3339_opts(SecondsFormat::Micros, true))
    .execute(store.pool())
    .await?;
    sqlx::query(
        "DELETE FROM resource_subscriptions WHERE principal = $1 AND uri NOT IN
           (SELECT uri FROM resource_subscriptions WHERE principal = $1
            ORDER BY created_at DESC, uri LIMIT $2)",
    )
    .bind(principal)
    .bind(MAX_PER_PRINCIPAL)
    .execute(store.pool())
    .await?;
    Ok(())
}

pub async fn remove(store: &Store, principal: &str, uri: &str) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query("DELETE FROM resource_subscriptions WHERE principal = $1 AND uri = $2")
        .bind(principal)
        .bind(uri)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// `principal`'s subscriptions.
pub async fn of(store: &Store, principal: &str) -> Result<Vec<Subscription>, StoreError> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT uri, after_sequence FROM resource_subscriptions WHERE principal = $1 ORDER BY uri",
    )
    .bind(principal)
    .fetch_all(store.pool())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(uri, after)| Subscription {
            uri,
            after_sequence: u64::try_from(after).unwrap_or(0),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn subscriptions_are_per_principal_and_the_oldest_give_way() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let t0 = Utc::now();
        let at = |uri: String| Subscription {
            uri,
            after_sequence: 7,
        };
        for i in 0..=MAX_PER_PRINCIPAL {
            let uri = format!("dms://dealerships/d/vehicles/{i}");
            let when = t0 + chrono::Duration::seconds(i);
            add(&store, "alice", &at(uri), when).await.unwrap();
        }
        let events = at("dms://dealerships/d/events".into());
        add(&store, "bob", &events, t0).await.unwrap();
        let alice: Vec<String> = of(&store, "alice")
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.uri)
            .collect();
        assert_eq!(alice.len() as i64, MAX_PER_PRINCIPAL);
        assert!(
            !alice.contains(&"dms://dealerships/d/vehicles/0".to_owned()),
            "the oldest gave way"
        );
        assert!(alice.contains(&format!("dms://dealerships/d/vehicles/{MAX_PER_PRINCIPAL}")));
        assert_eq!(of(&store, "bob").await.unwrap(), [events]);
        remove(&store, "bob", "dms://dealerships/d/events")
            .await
            .unwrap();
        assert!(of(&store, "bob").await.unwrap().is_empty());
    }
}

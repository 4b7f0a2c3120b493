//! Keys the bridge makes for itself, one per name and store (`migrations/*/0015`):
//! the first process to ask makes it, every replica and restart reads the same.

use super::{Store, StoreError};

/// The key named `name`, made (32 random bytes) when the store has none yet.
pub async fn key(store: &Store, name: &str) -> Result<Vec<u8>, StoreError> {
    let fresh: String = (0..2)
        .map(|_| hex::encode(uuid::Uuid::new_v4().as_bytes()))
        .collect();
    {
        let _turn = store.write_turn().await;
        sqlx::query("INSERT INTO bridge_keys (name, key) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(name)
            .bind(&fresh)
            .execute(store.pool())
            .await?;
    }
    let kept: String = sqlx::query_scalar("SELECT key FROM bridge_keys WHERE name = $1")
        .bind(name)
        .fetch_one(store.pool())
        .await?;
    Ok(hex::decode(&kept).unwrap_or_else(|_| kept.into_bytes()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_key_is_made_once_and_read_alike() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let first = key(&store, "event_cursors").await.unwrap();
        assert_eq!(first.len(), 32);
        assert_eq!(key(&store, "event_cursors").await.unwrap(), first);
        assert_ne!(key(&store, "other").await.unwrap(), first);
    }
}

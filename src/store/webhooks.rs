//! SQL for webhook delivery (`migrations/*/0009`): each endpoint's cursor per
//! dealership over the event log, and the events it dead-lettered. The
//! deliverer decides; this only reads and writes.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::ts;
use super::{Store, StoreError};

/// Where an endpoint stands in a dealership's event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The endpoint has every event up to this sequence (or gave up on it).
    pub delivered_through: u64,
    /// Attempts made at the event after `delivered_through`.
    pub attempts: u32,
    /// When that event is due again, after a failed attempt.
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// An endpoint's standing at one dealership, for `/readyz` and metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub dealership: String,
    /// Events after the cursor (the dealership's head minus `delivered_through`).
    pub undelivered: u64,
    pub dead_letters: u64,
    pub attempts: u32,
    /// The class of the last failed attempt at the head event.
    pub last_error: Option<String>,
}

fn as_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn as_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or_default()
}

/// The cursor of `endpoint` at `dealership`, made at the dealership's current
/// head the first time (a new endpoint gets no history). One statement, so
/// an event committed meanwhile is either before the head or after it.
pub async fn open_cursor(
    store: &Store,
    endpoint: &str,
    dealership: &str,
    now: DateTime<Utc>,
) -> Result<Cursor, StoreError> {
    {
        let _turn = store.write_turn().await;
        sqlx::query(
            "INSERT INTO webhook_cursors (endpoint, dealership, delivered_through, attempts, updated_at)
             VALUES ($1, $2, COALESCE((SELECT last_sequence FROM event_heads WHERE dealership = $2), 0), 0, $3)
             ON CONFLICT (endpoint, dealership) DO NOTHING",
        )
        .bind(endpoint)
        .bind(dealership)
        .bind(ts(now))
        .execute(store.pool())
        .await?;
    }
    let row = sqlx::query(
        "SELECT delivered_through, attempts, next_attempt_at FROM webhook_cursors
         WHERE endpoint = $1 AND dealership = $2",
    )
    .bind(endpoint)
    .bind(dealership)
    .fetch_one(store.pool())
    .await?;
    let next: Option<String> = row.try_get("next_attempt_at")?;
    Ok(Cursor {
        delivered_through: as_u64(row.try_get("delivered_through")?),
        attempts: u32::try_from(row.try_get::<i64, _>("attempts")?).unwrap_or(u32::MAX),
        next_attempt_at: next
            .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.with_timezone(&Utc)),
    })
}

/// The endpoint has every event through `sequence`: the next one starts afresh.
/// Never moves a cursor back.
pub async fn advance(
    store: &Store,
    endpoint: &str,
    dealership: &str,
    sequence: u64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    move_past(store.pool(), endpoint, dealership, sequence, now).await
}

/// Moves the cursor to `sequence` with a fresh attempt count, never back.
async fn move_past<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
    endpoint: &str,
    dealership: &str,
    sequence: u64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE webhook_cursors SET delivered_through = $1, attempts = 0, next_attempt_at = NULL,
             last_error = NULL, updated_at = $2
         WHERE endpoint = $3 AND dealership = $4 AND delivered_through < $1",
    )
    .bind(as_i64(sequence))
    .bind(ts(now))
    .bind(endpoint)
    .bind(dealership)
    .execute(db)
    .await?;
    Ok(())
}

/// An attempt at the event after the cursor failed; it is due again at `next`.
pub async fn attempt_failed(
    store: &Store,
    endpoint: &str,
    dealership: &str,
    attempts: u32,
    next: DateTime<Utc>,
    error_class: &str,
) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query(
        "UPDATE webhook_cursors SET attempts = $1, next_attempt_at = $2, last_error = $3, updated_at = $4
         WHERE endpoint = $5 AND dealership = $6",
    )
    .bind(i64::from(attempts))
    .bind(ts(next))
    .bind(error_class)
    .bind(ts(Utc::now()))
    .bind(endpoint)
    .bind(dealership)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Gives up on event `sequence` after `attempts`: it is recorded as a dead
/// letter and the cursor moves past it, in one transaction.
pub async fn dead_letter(
    store: &Store,
    endpoint: &str,
    dealership: &str,
    sequence: u64,
    attempts: u32,
    error_class: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let mut write = store.write().await?;
    sqlx::query(
        "INSERT INTO webhook_dead_letters (endpoint, dealership, sequence, attempts, last_error, dead_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (endpoint, dealership, sequence) DO NOTHING",
    )
    .bind(endpoint)
    .bind(dealership)
    .bind(as_i64(sequence))
    .bind(i64::from(attempts))
    .bind(error_class)
    .bind(ts(now))
    .execute(&mut *write.tx)
    .await?;
    move_past(&mut *write.tx, endpoint, dealership, sequence, now).await?;
    write.tx.commit().await?;
    Ok(())
}

/// Whether `endpoint` gave up on event `sequence` of `dealership`.
pub async fn is_dead_letter(
    store: &Store,
    endpoint: &str,
    dealership: &str,
    sequence: u64,
) -> Result<bool, StoreError> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT sequence FROM webhook_dead_letters
         WHERE endpoint = $1 AND dealership = $2 AND sequence = $3",
    )
    .bind(endpoint)
    .bind(dealership)
    .bind(as_i64(sequence))
    .fetch_optional(store.pool())
    .await?;
    Ok(found.is_some())
}

/// An operator's retry of a dead letter: delivered, it is one no more
/// (`error_class` `None`); failed, it counts one more attempt and its class.
pub async fn dead_letter_retried(
    store: &Store,
    endpoint: &str,
    dealership: &str,
    sequence: u64,
    error_class: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let mut write = store.write().await?;
    let delete = "DELETE FROM webhook_dead_letters
         WHERE endpoint = $1 AND dealership = $2 AND sequence = $3";
    let update =
        "UPDATE webhook_dead_letters SET attempts = attempts + 1, last_error = $4, dead_at = $5
         WHERE endpoint = $1 AND dealership = $2 AND sequence = $3";
    let base = sqlx::query(if error_class.is_some() {
        update
    } else {
        delete
    })
    .bind(endpoint)
    .bind(dealership)
    .bind(as_i64(sequence));
    let query = match error_class {
        Some(class) => base.bind(class).bind(ts(now)),
        None => base,
    };
    query.execute(&mut *write.tx).await?;
    write.tx.commit().await?;
    Ok(())
}

/// Every endpoint's `delivered_through` at `dealership`, by endpoint.
pub async fn delivered_through(
    store: &Store,
    dealership: &str,
) -> Result<Vec<(String, u64)>, StoreError> {
    let rows = sqlx::query(
        "SELECT endpoint, delivered_through FROM webhook_cursors WHERE dealership = $1",
    )
    .bind(dealership)
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("endpoint")?,
                as_u64(r.try_get("delivered_through")?),
            ))
        })
        .collect()
}

/// Where `endpoint` stands at each dealership it has a cursor for.
pub async fn standing(store: &Store, endpoint: &str) -> Result<Vec<Standing>, StoreError> {
    let rows = sqlx::query(
        "SELECT c.dealership, c.attempts, c.last_error,
             COALESCE(h.last_sequence, 0) - c.delivered_through AS undelivered,
             (SELECT COUNT(*) FROM webhook_dead_letters d
                 WHERE d.endpoint = c.endpoint AND d.dealership = c.dealership) AS dead_letters
         FROM webhook_cursors c LEFT JOIN event_heads h ON h.dealership = c.dealership
         WHERE c.endpoint = $1
         ORDER BY c.dealership",
    )
    .bind(endpoint)
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Standing {
                dealership: r.try_get("dealership")?,
                undelivered: as_u64(r.try_get("undelivered")?),
                dead_letters: as_u64(r.try_get("dead_letters")?),
                attempts: u32::try_from(r.try_get::<i64, _>("attempts")?).unwrap_or(u32::MAX),
                last_error: r.try_get("last_error")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::model::event::NewEvent;
    use crate::store::events;

    async fn store_with_events(n: usize) -> Store {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let now = Utc::now();
        let new: Vec<NewEvent> = (0..n)
            .map(|i| NewEvent::lead_created(&format!("lead-{i}"), "agent", now))
            .collect();
        events::append(&store, "acme", &new, now).await.unwrap();
        store
    }

    #[tokio::test]
    async fn a_new_cursor_starts_at_the_head_and_is_kept_across_opens() {
        let store = store_with_events(3).await;
        let now = Utc::now();
        let cursor = open_cursor(&store, "hook", "acme", now).await.unwrap();
        assert_eq!(cursor.delivered_through, 3);
        assert_eq!(cursor.attempts, 0);
        let fresh = open_cursor(&store, "hook", "other", now).await.unwrap();
        assert_eq!(fresh.delivered_through, 0);

        events::append(
            &store,
            "acme",
            &[NewEvent::lead_created("lead-9", "agent", now)],
            now,
        )
        .await
        .unwrap();
        attempt_failed(&store, "hook", "acme", 2, now, "http_500")
            .await
            .unwrap();
        let reopened = open_cursor(&store, "hook", "acme", now).await.unwrap();
        assert_eq!(
            reopened.delivered_through, 3,
            "a reopen does not move to the head"
        );
        assert_eq!(reopened.attempts, 2);
        assert!(reopened.next_attempt_at.is_some());
        let behind = standing(&store, "hook").await.unwrap();
        assert_eq!(behind[0].undelivered, 1);
        assert_eq!(behind[0].last_error.as_deref(), Some("http_500"));

        dead_letter(&store, "hook", "acme", 4, 3, "http_500", now)
            .await
            .unwrap();
        advance(&store, "hook", "acme", 2, now).await.unwrap();
        let after = open_cursor(&store, "hook", "acme", now).await.unwrap();
        assert_eq!(after.delivered_through, 4, "a cursor never moves back");
        assert_eq!(after.attempts, 0);
        let done = standing(&store, "hook").await.unwrap();
        assert_eq!((done[0].undelivered, done[0].dead_letters), (0, 1));
        assert_eq!(
            delivered_through(&store, "acme").await.unwrap(),
            [("hook".to_owned(), 4)]
        );
    }
}

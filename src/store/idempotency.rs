//! SQL for the write step's idempotency table (`migrations/*/0005`): taking the
//! turn of a key, finishing it with the answer, or giving it back. Every
//! process on the store sees the same rows, so a key is run once across
//! replicas, not only within one process.

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, Row};

use super::{Store, StoreError};

/// Which key: a principal's key for one tool at one dealership.
#[derive(Debug, Clone, Copy)]
pub struct KeyRef<'a> {
    pub dealership: &'a str,
    pub principal: &'a str,
    pub tool: &'a str,
    pub key: &'a str,
}

/// What the store says about a key when a call asks for its turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// This call holds the key now: run the write, then finish or release it.
    Taken,
    /// Answered before, for the same request: replay this answer.
    Answered(String),
    /// Used before for a different request.
    Conflict,
    /// Another call holds the key and is still running: ask again shortly.
    Busy,
}

/// A statement on one key's row: `$1`–`$4` are the key, later parameters follow.
fn on_key<'q>(sql: &'static str, key: KeyRef<'q>) -> Query<'q, Any, AnyArguments> {
    sqlx::query(sql)
        .bind(key.dealership)
        .bind(key.principal)
        .bind(key.tool)
        .bind(key.key)
}

/// The row's key, as SQL over `$1`–`$4`.
macro_rules! the_key {
    () => {
        "dealership = $1 AND principal = $2 AND tool = $3 AND key = $4"
    };
}

/// Asks for the turn of `key` for a request with `request_hash`. Times are
/// Unix milliseconds: `lease_until` bounds a claim whose holder died, and
/// `expires_at` how long an answer replays.
pub async fn take_turn(
    store: &Store,
    key: KeyRef<'_>,
    request_hash: &str,
    now: i64,
    lease_until: i64,
    expires_at: i64,
) -> Result<Turn, StoreError> {
    let pool = store.pool();
    // Expired answers go, this key's among them: the key is free for a new
    // request, and keys nobody reuses do not pile up (the expiry index makes
    // this a short range scan).
    sqlx::query("DELETE FROM idempotency WHERE state = 'done' AND expires_at <= $1")
        .bind(now)
        .execute(pool)
        .await?;
    let inserted = on_key(
        "INSERT INTO idempotency (dealership, principal, tool, key, request_hash, state, lease_until, expires_at)
         VALUES ($1, $2, $3, $4, $5, 'running', $6, $7) ON CONFLICT DO NOTHING",
        key,
    )
    .bind(request_hash)
    .bind(lease_until)
    .bind(expires_at)
    .execute(pool)
    .await?;
    if inserted.rows_affected() == 1 {
        return Ok(Turn::Taken);
    }
    let row = on_key(
        concat!(
            "SELECT request_hash, state, answer, lease_until FROM idempotency WHERE ",
            the_key!()
        ),
        key,
    )
    .fetch_optional(pool)
    .await?;
    // Released between the insert and the read: the next ask may take it.
    let Some(row) = row else {
        return Ok(Turn::Busy);
    };
    if row.try_get::<String, _>("request_hash")? != request_hash {
        return Ok(Turn::Conflict);
    }
    if row.try_get::<String, _>("state")? == "done" {
        return Ok(Turn::Answered(
            row.try_get::<Option<String>, _>("answer")?
                .unwrap_or_default(),
        ));
    }
    if row.try_get::<i64, _>("lease_until")? > now {
        return Ok(Turn::Busy);
    }
    // The holder's lease lapsed (it died mid-call): take the key over, once.
    let taken = on_key(
        concat!(
            "UPDATE idempotency SET lease_until = $5, expires_at = $6 WHERE ",
            the_key!(),
            " AND state = 'running' AND lease_until <= $7"
        ),
        key,
    )
    .bind(lease_until)
    .bind(expires_at)
    .bind(now)
    .execute(pool)
    .await?;
    Ok(if taken.rows_affected() == 1 {
        Turn::Taken
    } else {
        Turn::Busy
    })
}

/// Records the answer of a key this call holds; later calls replay it.
pub async fn finish(store: &Store, key: KeyRef<'_>, answer: &str) -> Result<(), StoreError> {
    on_key(
        concat!(
            "UPDATE idempotency SET state = 'done', answer = $5 WHERE ",
            the_key!(),
            " AND state = 'running'"
        ),
        key,
    )
    .bind(answer)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Gives back a key whose write failed, so the caller may retry with it.
pub async fn release(store: &Store, key: KeyRef<'_>) -> Result<(), StoreError> {
    on_key(
        concat!(
            "DELETE FROM idempotency WHERE ",
            the_key!(),
            " AND state = 'running'"
        ),
        key,
    )
    .execute(store.pool())
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(key: &str) -> KeyRef<'_> {
        KeyRef {
            dealership: "acme",
            principal: "agent",
            tool: "leads.create",
            key,
        }
    }

    async fn rows(store: &Store) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM idempotency")
            .fetch_one(store.pool())
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_key_replays_until_it_expires_and_expired_keys_are_swept() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let turn = |k, hash, now| take_turn(&store, key(k), hash, now, now + 10, now + 100);
        assert_eq!(turn("a", "h1", 0).await.unwrap(), Turn::Taken);
        assert_eq!(turn("a", "h1", 1).await.unwrap(), Turn::Busy);
        finish(&store, key("a"), "{}").await.unwrap();
        assert_eq!(
            turn("a", "h1", 2).await.unwrap(),
            Turn::Answered("{}".into())
        );
        assert_eq!(turn("a", "h2", 3).await.unwrap(), Turn::Conflict);
        // Another key's turn after the expiry sweeps "a": its key is free again.
        assert_eq!(turn("b", "h1", 200).await.unwrap(), Turn::Taken);
        assert_eq!(rows(&store).await, 1);
        assert_eq!(turn("a", "h2", 201).await.unwrap(), Turn::Taken);
    }

    #[tokio::test]
    async fn a_lapsed_claim_is_taken_over_and_a_released_key_is_free() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let turn = |hash, now| take_turn(&store, key("a"), hash, now, now + 10, now + 100);
        assert_eq!(turn("h1", 0).await.unwrap(), Turn::Taken);
        // The holder died: after its lease another call takes the key.
        assert_eq!(turn("h1", 11).await.unwrap(), Turn::Taken);
        release(&store, key("a")).await.unwrap();
        assert_eq!(rows(&store).await, 0);
        assert_eq!(turn("h2", 12).await.unwrap(), Turn::Taken);
    }
}

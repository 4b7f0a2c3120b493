//! A vendor's quota shared by replicas, kept in every window of the vendor's
//! even while some replicas cannot reach Redis.
//!
//! Callers' quotas may overshoot a little while a replica decides alone; a
//! vendor's may not (a vendor counting a sliding window answers 429 and may
//! suspend the dealer's credentials). So each replica's share is reserved
//! for it whenever it might be deciding alone:
//!
//! - Replicas count themselves present in Redis (a sorted set scored by
//!   Redis's clock: every vendor check and a heartbeat each second); one not
//!   heard from for [`PRESENCE_TTL`] is absent.
//! - Through Redis, the replicas present share `floor(requests × present /
//!   replicas)` of each window; each absent one keeps `floor(requests /
//!   replicas)` for itself. Together never more than `requests`.
//! - A replica cut off from Redis decides alone only once the others can no
//!   longer count it present and a whole window has passed since: until
//!   then it refuses (the caller gets `rate_limited` with a wait).
//! - On the way back it rejoins only once the requests it sent alone have
//!   left the vendor's window; until then it refuses too.
//!
//! Every window is the vendor's `per` plus the quota's margin
//! ([`super::window`]), so jitter up to the margin is absorbed as well.

use std::sync::Arc;
use std::time::Duration;

use governor::DefaultDirectRateLimiter;
use governor::clock::Clock;
use tokio::time::Instant;

use super::Admission;
use super::shared::{RETRY_REDIS_AFTER, SharedQuotaError, SharedQuotaStore, admission_from};
use super::window::{governor_quota, spacing};
use crate::config::Rate;

/// A replica not heard from for this long is absent: its share is reserved.
pub const PRESENCE_TTL: Duration = Duration::from_secs(3);
/// How often a replica says it is present, whatever its traffic.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// One vendor check. KEYS[1]: the quota's key; KEYS[2]: the replicas
/// present. ARGV: requests, burst, window (µs), this replica's id, the
/// presence TTL (µs), replicas. Counts this replica present, drops those
/// gone quiet, then GCRA at the spacing for the present replicas' part of
/// the window. Returns `{1, 0}` admitted, `{0, wait_µs}` refused.
const VENDOR_SCRIPT: &str = concat!(
    now_lua!(),
    r"
local ttl = tonumber(ARGV[5])
redis.call('ZADD', KEYS[2], now, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ttl)
redis.call('PEXPIRE', KEYS[2], math.ceil(ttl / 1000) * 10)
local replicas = tonumber(ARGV[6])
local present = math.min(redis.call('ZCARD', KEYS[2]), replicas)
local capacity = math.floor(tonumber(ARGV[1]) * present / replicas)
if capacity < 1 then
  return {0, ttl}
end
local burst = math.min(tonumber(ARGV[2]), capacity)
local interval = math.ceil(tonumber(ARGV[3]) / (capacity - burst + 1))
",
    gcra_lua!()
);

/// Says this replica is present (the same set and rules as the check).
const HEARTBEAT_SCRIPT: &str = concat!(
    now_lua!(),
    r"
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
redis.call('PEXPIRE', KEYS[1], math.ceil(ttl / 1000) * 10)
return redis.call('ZCARD', KEYS[1])
"
);

const PRESENCE_KEY: &str = "replicas";

/// Where this replica stands for vendor quotas right now.
enum Footing {
    /// Present in Redis: ask it.
    Joined,
    /// Back from an outage: wait until then for local decisions to age out.
    Rejoining(Instant),
    /// Redis failed a moment ago; decide alone (when allowed).
    CutOff,
    /// Redis failed a while ago: see whether it answers again.
    Probe,
}

/// One vendor's quota, counted by every replica.
pub struct SharedVendorQuota {
    store: Arc<SharedQuotaStore>,
    requests: u32,
    burst: u32,
    /// The vendor's `per` plus the margin.
    window: Duration,
    /// This replica's own share while it decides alone; `None`: no share
    /// (fewer requests than replicas).
    alone: Option<DefaultDirectRateLimiter>,
    vendor_script: redis::Script,
}

impl SharedVendorQuota {
    /// `rate`: the vendor's quota; `margin`: the headroom added to its window.
    pub fn new(store: Arc<SharedQuotaStore>, rate: &Rate, margin: Duration) -> Option<Self> {
        let window = rate.per.checked_add(margin)?;
        let requests = rate.requests.max(1);
        let burst = rate.burst.unwrap_or(1).clamp(1, requests);
        let alone = spacing(requests / store.replicas, burst / store.replicas, window)
            .and_then(governor_quota)
            .map(DefaultDirectRateLimiter::direct);
        Some(Self {
            store,
            requests,
            burst,
            window,
            alone,
            vendor_script: redis::Script::new(VENDOR_SCRIPT),
        })
    }

    /// Counts one request to the vendor `name`.
    pub async fn check(&self, name: &str) -> Admission {
        match self.footing().await {
            Footing::Joined => match self.check_in_redis(name).await {
                Ok(admission) => {
                    self.store.mark_present();
                    return admission;
                }
                Err(error) => self.store.mark_down(&error),
            },
            Footing::Rejoining(until) => return wait_until(until),
            Footing::CutOff | Footing::Probe => {}
        }
        self.decide_alone()
    }

    /// Where this replica stands; a due probe of Redis is made here.
    async fn footing(&self) -> Footing {
        match self.store.footing() {
            Footing::Probe => self.store.probe().await,
            footing => footing,
        }
    }

    async fn check_in_redis(&self, name: &str) -> Result<Admission, SharedQuotaError> {
        let store = &self.store;
        let window_us = u64::try_from(self.window.as_micros()).unwrap_or(u64::MAX);
        store
            .within_timeout(|mut connection| async move {
                let answer: Vec<i64> = self
                    .vendor_script
                    .key(store.key(&format!("upstream:{name}")))
                    .key(store.key(PRESENCE_KEY))
                    .arg(self.requests)
                    .arg(self.burst)
                    .arg(window_us)
                    .arg(&store.replica_id)
                    .arg(micros(PRESENCE_TTL))
                    .arg(store.replicas)
                    .invoke_async(&mut connection)
                    .await?;
                admission_from(answer)
            })
            .await
    }

    /// This replica's share, once the others can no longer count it present
    /// and a whole window has passed since.
    fn decide_alone(&self) -> Admission {
        self.store.metrics.quota_fallbacks.inc();
        let now = Instant::now();
        let present_at = self.store.standing().and_then(|s| s.present_at);
        if let Some(at) = present_at {
            let free_at = at + PRESENCE_TTL + self.window;
            if now < free_at {
                return wait_until(free_at);
            }
        }
        let Some(alone) = &self.alone else {
            return Admission::Refused {
                retry_after: RETRY_REDIS_AFTER,
            };
        };
        match alone.check() {
            Ok(()) => {
                self.store.sent_alone(now + self.window);
                Admission::Allowed
            }
            Err(not_until) => Admission::Refused {
                retry_after: not_until
                    .wait_time_from(alone.clock().now())
                    .max(Duration::from_millis(1)),
            },
        }
    }
}

fn wait_until(until: Instant) -> Admission {
    Admission::Refused {
        retry_after: until
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1)),
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl SharedQuotaStore {
    /// A copy of the standing, if the lock is sound.
    fn standing(&self) -> Option<super::shared::Standing> {
        self.standing.lock().ok().map(|s| s.clone())
    }

    fn footing(&self) -> Footing {
        let Some(standing) = self.standing() else {
            return Footing::CutOff;
        };
        let now = Instant::now();
        if standing.cut_off {
            let due = standing
                .skip_until
                .as_ref()
                .is_none_or(|(until, _)| now >= *until);
            return if due { Footing::Probe } else { Footing::CutOff };
        }
        match standing.local_until {
            Some(until) if now < until => Footing::Rejoining(until),
            _ => Footing::Joined,
        }
    }

    /// Asks Redis whether it answers (without counting this replica present).
    async fn probe(&self) -> Footing {
        let ping = self
            .within_timeout(|mut connection| async move {
                redis::cmd("PING")
                    .query_async::<String>(&mut connection)
                    .await
                    .map_err(SharedQuotaError::from)
            })
            .await;
        match ping {
            Ok(_) => {
                self.mark_up();
                self.footing()
            }
            Err(error) => {
                self.mark_down(&error);
                Footing::CutOff
            }
        }
    }

    fn mark_present(&self) {
        if let Ok(mut standing) = self.standing.lock() {
            standing.present_at = Some(Instant::now());
        }
    }

    /// A vendor request decided here leaves the vendor's window at `until`.
    fn sent_alone(&self, until: Instant) {
        if let Ok(mut standing) = self.standing.lock() {
            standing.local_until = Some(standing.local_until.map_or(until, |u| u.max(until)));
        }
    }

    /// Says this replica is present every [`HEARTBEAT`] (when it may be),
    /// so the others' part of each vendor window does not depend on this
    /// replica's traffic; leaves the set when `cancel` fires.
    pub fn spawn_heartbeats(self: &Arc<Self>, cancel: tokio_util::sync::CancellationToken) {
        let store = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(HEARTBEAT);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => store.heartbeat().await,
                    () = cancel.cancelled() => break,
                }
            }
            store.leave().await;
        });
    }

    async fn heartbeat(&self) {
        let footing = match self.footing() {
            Footing::Probe => self.probe().await,
            footing => footing,
        };
        if !matches!(footing, Footing::Joined) {
            return;
        }
        let beat = self
            .within_timeout(|mut connection| async move {
                redis::Script::new(HEARTBEAT_SCRIPT)
                    .key(self.key(PRESENCE_KEY))
                    .arg(&self.replica_id)
                    .arg(micros(PRESENCE_TTL))
                    .invoke_async::<i64>(&mut connection)
                    .await
                    .map_err(SharedQuotaError::from)
            })
            .await;
        match beat {
            Ok(_) => {
                self.mark_up();
                self.mark_present();
            }
            Err(error) => self.mark_down(&error),
        }
    }

    /// Leaves the set of replicas present, so the others need not wait for
    /// the TTL to take this replica's part of each window.
    async fn leave(&self) {
        let left = self
            .within_timeout(|mut connection| async move {
                redis::cmd("ZREM")
                    .arg(self.key(PRESENCE_KEY))
                    .arg(&self.replica_id)
                    .query_async::<i64>(&mut connection)
                    .await
                    .map_err(SharedQuotaError::from)
            })
            .await;
        if let Err(error) = left {
            tracing::debug!(error = %error, "Could not leave the replicas present in Redis.");
        }
    }
}

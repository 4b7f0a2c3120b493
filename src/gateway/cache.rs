//! The read cache. Only read-only, idempotent, open-world tools are cached;
//! entries are keyed by dealership, domain generation, tool and canonical
//! arguments, so no tenant can ever see another's entry. Concurrent identical
//! reads collapse into one upstream call. Errors are never cached. A write
//! bumps the generation of what it affects, which retires those entries.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::config::CacheConfig;
use crate::contract::error::ToolError;
pub use crate::contract::payload::Payload;
use crate::model::Domain;

/// A cached result.
struct Cached {
    payload: Payload,
    stored_at: DateTime<Utc>,
    stored: Instant,
    ttl: Duration,
}

/// How a result was obtained, for the caller (`_meta`) and the audit record.
#[derive(Debug, Clone, Copy)]
pub struct CacheInfo {
    /// True when no upstream call was made for this caller.
    pub hit: bool,
    pub stored_at: DateTime<Utc>,
    pub age: Duration,
}

struct PerEntryTtl;

impl moka::Expiry<String, Arc<Cached>> for PerEntryTtl {
    fn expire_after_create(
        &self,
        _key: &String,
        value: &Arc<Cached>,
        _now: std::time::Instant,
    ) -> Option<Duration> {
        Some(value.ttl)
    }
}

pub struct ReadCache {
    entries: moka::future::Cache<String, Arc<Cached>>,
    ttl: BTreeMap<Domain, Duration>,
    enabled: bool,
    generations: Mutex<HashMap<(String, Domain), u64>>,
}

impl ReadCache {
    pub fn new(config: &CacheConfig) -> Self {
        let entries = moka::future::Cache::builder()
            .max_capacity(config.max_entries)
            .expire_after(PerEntryTtl)
            .build();
        Self {
            entries,
            ttl: config.ttl.clone(),
            enabled: config.enabled,
            generations: Mutex::new(HashMap::new()),
        }
    }

    /// How long a domain's results are kept. Zero (caching off, or no TTL for
    /// the domain): nothing is kept, but identical calls in flight still share
    /// one computation, as their upstream reads do.
    pub fn ttl(&self, domain: Domain) -> Duration {
        self.enabled
            .then(|| self.ttl.get(&domain).copied())
            .flatten()
            .unwrap_or_default()
    }

    /// The key for a call. `canonical_args` must be the arguments serialized with sorted keys.
    pub fn key(
        &self,
        dealership: &str,
        domain: Domain,
        tool: &str,
        canonical_args: &str,
    ) -> String {
        let generation = self
            .generations
            .lock()
            .map(|g| {
                g.get(&(dealership.to_owned(), domain))
                    .copied()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        format!(
            "{dealership}\u{1f}{}\u{1f}{generation}\u{1f}{tool}\u{1f}{canonical_args}",
            domain.as_str()
        )
    }

    /// The cached result, or the result of `compute`, shared with every
    /// identical call in flight. Errors are returned to all of them and not kept.
    /// The info is `None` when there is nothing to tell the caller: the TTL is
    /// zero and this call computed its own result.
    pub async fn get_or_compute<F>(
        &self,
        key: String,
        ttl: Duration,
        compute: F,
    ) -> Result<(Payload, Option<CacheInfo>), ToolError>
    where
        F: Future<Output = Result<Payload, ToolError>>,
    {
        let computed = AtomicBool::new(false);
        let entry = self
            .entries
            .try_get_with(key, async {
                computed.store(true, Ordering::Relaxed);
                let payload = compute.await?;
                Ok::<_, ToolError>(Arc::new(Cached {
                    payload,
                    stored_at: Utc::now(),
                    stored: Instant::now(),
                    ttl,
                }))
            })
            .await
            .map_err(|e| (*e).clone())?;
        let hit = !computed.load(Ordering::Relaxed);
        let info = (hit || !ttl.is_zero()).then(|| CacheInfo {
            hit,
            stored_at: entry.stored_at,
            age: entry.stored.elapsed(),
        });
        Ok((entry.payload.clone(), info))
    }

    /// Retires every cached result of `domain` at `dealership` (after a write).
    pub fn invalidate(&self, dealership: &str, domain: Domain) {
        if let Ok(mut generations) = self.generations.lock() {
            *generations
                .entry((dealership.to_owned(), domain))
                .or_insert(0) += 1;
        }
    }

    /// Retires every cached result (invalidations from elsewhere may have
    /// been lost).
    pub fn invalidate_all(&self) {
        self.entries.invalidate_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn cache() -> ReadCache {
        ReadCache::new(&CacheConfig::default())
    }

    #[tokio::test]
    async fn concurrent_identical_reads_compute_once() {
        let cache = Arc::new(cache());
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..50 {
            let (cache, calls) = (cache.clone(), calls.clone());
            tasks.push(tokio::spawn(async move {
                let key = cache.key("d", Domain::Inventory, "inventory.search", "{}");
                cache
                    .get_or_compute(key, Duration::from_secs(60), async {
                        calls.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Ok(Payload::serialize(&serde_json::json!({"n": 1})).unwrap())
                    })
                    .await
                    .map(|(_, info)| info.is_some_and(|i| i.hit))
            }));
        }
        let mut hits = 0;
        for t in tasks {
            hits += usize::from(t.await.unwrap().unwrap());
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(hits, 49);
    }

    #[tokio::test]
    async fn a_zero_ttl_keeps_nothing_but_joins_calls_in_flight() {
        let cache = Arc::new(cache());
        let calls = Arc::new(AtomicUsize::new(0));
        let compute = |cache: Arc<ReadCache>, calls: Arc<AtomicUsize>| async move {
            let key = cache.key("d", Domain::Inventory, "inventory.search", "{}");
            cache
                .get_or_compute(key, Duration::ZERO, async {
                    calls.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok(Payload::serialize(&serde_json::json!({"n": 1})).unwrap())
                })
                .await
                .map(|(_, info)| info.is_some_and(|i| i.hit))
        };
        let together: Vec<_> = (0..10)
            .map(|_| tokio::spawn(compute(cache.clone(), calls.clone())))
            .collect();
        for t in together {
            t.await.unwrap().unwrap();
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1, "calls in flight share one");
        let key = cache.key("d", Domain::Inventory, "inventory.search", "{}");
        let (_, later) = cache
            .get_or_compute(key, Duration::ZERO, async {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok(Payload::serialize(&serde_json::json!({"n": 2})).unwrap())
            })
            .await
            .unwrap();
        assert!(later.is_none(), "computed again, and nothing to report");
        assert_eq!(calls.load(Ordering::SeqCst), 2, "nothing was kept");
    }

    #[tokio::test]
    async fn errors_are_not_cached_and_writes_retire_entries() {
        let cache = cache();
        let key = || cache.key("d", Domain::Inventory, "t", "{}");
        let failed = cache
            .get_or_compute(key(), Duration::from_secs(60), async {
                Err(ToolError::internal())
            })
            .await;
        assert!(failed.is_err());
        let (_, first) = cache
            .get_or_compute(key(), Duration::from_secs(60), async {
                Ok(Payload::serialize(&serde_json::json!(1)).unwrap())
            })
            .await
            .unwrap();
        assert!(!first.unwrap().hit);
        let (_, second) = cache
            .get_or_compute(key(), Duration::from_secs(60), async {
                Ok(Payload::serialize(&serde_json::json!(2)).unwrap())
            })
            .await
            .unwrap();
        assert!(second.unwrap().hit);
        cache.invalidate("d", Domain::Inventory);
        let (payload, third) = cache
            .get_or_compute(key(), Duration::from_secs(60), async {
                Ok(Payload::serialize(&serde_json::json!(3)).unwrap())
            })
            .await
            .unwrap();
        assert!(!third.unwrap().hit);
        assert_eq!(payload.value(), &serde_json::json!(3));
        assert_ne!(
            cache.key("d", Domain::Inventory, "t", "{}"),
            cache.key("e", Domain::Inventory, "t", "{}")
        );
    }
}

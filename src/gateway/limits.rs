//! Caller quotas (per token, per token and tool class, per anonymous client
//! address) with governor. Over quota, a call gets `rate_limited` with a
//! `retry_after_ms` a model can act on. With `[quotas]`, each quota is also
//! counted across replicas (see [`crate::quotas`]), after this process's own
//! limiter: what the local one refuses never costs a Redis round trip.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use governor::DefaultKeyedRateLimiter;
use governor::clock::Clock;

use crate::config::{Rate, RateLimitsConfig, TokenConfig, ToolClass};
use crate::contract::Principal;
use crate::quotas::{Admission, SharedQuota, SharedQuotaStore};

/// All caller quotas.
pub struct CallerLimits {
    per_token: Option<DefaultKeyedRateLimiter<String>>,
    overrides: BTreeMap<String, governor::DefaultDirectRateLimiter>,
    per_class: BTreeMap<ToolClass, DefaultKeyedRateLimiter<String>>,
    anonymous: Option<DefaultKeyedRateLimiter<IpAddr>>,
    shared: SharedLimits,
}

/// The same quotas counted across replicas; all empty without `[quotas]`.
#[derive(Default)]
struct SharedLimits {
    per_token: Option<SharedQuota>,
    overrides: BTreeMap<String, SharedQuota>,
    per_class: BTreeMap<ToolClass, SharedQuota>,
    anonymous: Option<SharedQuota>,
}

/// Which quota refused a call.
#[derive(Debug, Clone, Copy)]
pub enum LimitScope {
    Token,
    ToolClass,
    Anonymous,
}

impl LimitScope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Token => "token",
            Self::ToolClass => "tool_class",
            Self::Anonymous => "anonymous",
        }
    }
}

type Refusal = (LimitScope, Duration);

impl CallerLimits {
    /// `shared`: the replicas' common quota store, when `[quotas]` is set.
    pub fn new(
        config: &RateLimitsConfig,
        tokens: &[TokenConfig],
        shared: Option<&Arc<SharedQuotaStore>>,
    ) -> Self {
        let keyed = |rate: &Rate| {
            rate.quota(rate.requests)
                .map(DefaultKeyedRateLimiter::keyed)
        };
        Self {
            per_token: config.per_token.as_ref().and_then(keyed),
            overrides: tokens
                .iter()
                .filter_map(|t| {
                    Some((
                        t.name.clone(),
                        governor::DefaultDirectRateLimiter::direct(
                            t.rate_limit.as_ref()?.quota(t.rate_limit?.requests)?,
                        ),
                    ))
                })
                .collect(),
            per_class: config
                .per_class
                .iter()
                .filter_map(|(class, rate)| Some((*class, keyed(rate)?)))
                .collect(),
            anonymous: config
                .anonymous
                .as_ref()
                .and_then(|r| r.quota(r.requests))
                .map(DefaultKeyedRateLimiter::keyed),
            shared: shared
                .map(|store| SharedLimits::new(store, config, tokens))
                .unwrap_or_default(),
        }
    }

    /// Counts one call against every quota that applies.
    pub async fn check(
        &self,
        principal: &Principal,
        client: Option<IpAddr>,
        class: ToolClass,
    ) -> Result<(), Refusal> {
        if principal.anonymous {
            if let (Some(limiter), Some(ip)) = (&self.anonymous, client) {
                limiter.check_key(&ip).map_err(|n| {
                    (
                        LimitScope::Anonymous,
                        n.wait_time_from(limiter.clock().now()),
                    )
                })?;
                let key = ip.to_string();
                shared_check(self.shared.anonymous.as_ref(), &key, LimitScope::Anonymous).await?;
            }
            return Ok(());
        }
        let name = principal.name.to_string();
        self.check_token(&name).await?;
        if let Some(limiter) = self.per_class.get(&class) {
            limiter.check_key(&name).map_err(|n| {
                (
                    LimitScope::ToolClass,
                    n.wait_time_from(limiter.clock().now()),
                )
            })?;
            let key = format!("{}:{name}", class.as_str());
            shared_check(
                self.shared.per_class.get(&class),
                &key,
                LimitScope::ToolClass,
            )
            .await?;
        }
        Ok(())
    }

    /// The token's own quota (its override, else `per_token`), local then shared.
    async fn check_token(&self, name: &str) -> Result<(), Refusal> {
        let refused = |n: governor::NotUntil<_>, clock: &governor::clock::DefaultClock| {
            (LimitScope::Token, n.wait_time_from(clock.now()))
        };
        match (self.overrides.get(name), &self.per_token) {
            (Some(limiter), _) => {
                limiter.check().map_err(|n| refused(n, limiter.clock()))?;
                shared_check(self.shared.overrides.get(name), name, LimitScope::Token).await
            }
            (None, Some(limiter)) => {
                limiter
                    .check_key(&name.to_owned())
                    .map_err(|n| refused(n, limiter.clock()))?;
                shared_check(self.shared.per_token.as_ref(), name, LimitScope::Token).await
            }
            (None, None) => Ok(()),
        }
    }

    /// Forgets callers whose quota is back to full. Keys are principals and
    /// client addresses, and with OAuth sign-in every subject is a principal:
    /// without this the limiters would keep one entry per caller ever seen.
    pub fn forget_idle(&self) {
        let keyed = self.per_token.iter().chain(self.per_class.values());
        for limiter in keyed {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        if let Some(limiter) = &self.anonymous {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        self.shared.forget_idle();
    }
}

impl SharedLimits {
    /// Same rates and bursts as the local limiters (burst defaults to the rate's requests).
    fn new(
        store: &Arc<SharedQuotaStore>,
        config: &RateLimitsConfig,
        tokens: &[TokenConfig],
    ) -> Self {
        let quota = |scope: &'static str, rate: &Rate| {
            SharedQuota::new(store.clone(), scope, rate, rate.requests)
        };
        Self {
            per_token: config.per_token.as_ref().and_then(|r| quota("token", r)),
            overrides: tokens
                .iter()
                .filter_map(|t| Some((t.name.clone(), quota("token", t.rate_limit.as_ref()?)?)))
                .collect(),
            per_class: config
                .per_class
                .iter()
                .filter_map(|(class, rate)| Some((*class, quota("class", rate)?)))
                .collect(),
            anonymous: config
                .anonymous
                .as_ref()
                .and_then(|r| quota("anonymous", r)),
        }
    }

    /// The local shares keep one entry per caller too (used while Redis is away).
    fn forget_idle(&self) {
        let all = self
            .per_token
            .iter()
            .chain(self.overrides.values())
            .chain(self.per_class.values())
            .chain(self.anonymous.iter());
        for quota in all {
            quota.forget_idle();
        }
    }
}

/// Asks the shared quota, when there is one.
async fn shared_check(
    quota: Option<&SharedQuota>,
    key: &str,
    scope: LimitScope,
) -> Result<(), Refusal> {
    match quota {
        Some(quota) => match quota.check(key).await {
            Admission::Allowed => Ok(()),
            Admission::Refused { retry_after } => Err((scope, retry_after)),
        },
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use super::*;
    use crate::contract::DealershipGrant;

    fn principal(name: &str) -> Principal {
        Principal {
            name: Arc::from(name),
            anonymous: false,
            dealerships: DealershipGrant::All,
            scopes: BTreeSet::new(),
        }
    }

    #[tokio::test]
    async fn callers_whose_quota_refilled_are_forgotten() {
        let rate = Rate {
            requests: 1000,
            per: Duration::from_secs(1),
            burst: Some(1),
        };
        let config = RateLimitsConfig {
            per_token: Some(rate),
            per_class: BTreeMap::from([(ToolClass::Read, rate)]),
            anonymous: None,
        };
        let limits = CallerLimits::new(&config, &[], None);
        for i in 0..500 {
            let caller = principal(&format!("oauth:user-{i}"));
            assert!(limits.check(&caller, None, ToolClass::Read).await.is_ok());
        }
        let tracked = |l: &CallerLimits| {
            l.per_token.as_ref().map_or(0, |t| t.len())
                + l.per_class.values().map(|c| c.len()).sum::<usize>()
        };
        assert_eq!(tracked(&limits), 1000);
        // One request refills in 1 ms at 1000/s.
        std::thread::sleep(Duration::from_millis(20));
        limits.forget_idle();
        assert_eq!(tracked(&limits), 0);
    }
}

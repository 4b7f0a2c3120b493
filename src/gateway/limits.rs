//! Caller quotas (per token, per token and tool class, per anonymous client
//! address) with governor. Over quota, a call gets `rate_limited` with a
//! `retry_after_ms` a model can act on.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use governor::DefaultKeyedRateLimiter;
use governor::clock::Clock;

use crate::config::{Rate, RateLimitsConfig, TokenConfig, ToolClass};
use crate::contract::Principal;

/// All caller quotas.
pub struct CallerLimits {
    per_token: Option<DefaultKeyedRateLimiter<String>>,
    overrides: BTreeMap<String, governor::DefaultDirectRateLimiter>,
    per_class: BTreeMap<ToolClass, DefaultKeyedRateLimiter<String>>,
    anonymous: Option<DefaultKeyedRateLimiter<IpAddr>>,
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

impl CallerLimits {
    pub fn new(config: &RateLimitsConfig, tokens: &[TokenConfig]) -> Self {
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
        }
    }

    /// Counts one call against every quota that applies.
    pub fn check(
        &self,
        principal: &Principal,
        client: Option<IpAddr>,
        class: ToolClass,
    ) -> Result<(), (LimitScope, Duration)> {
        if principal.anonymous {
            if let (Some(limiter), Some(ip)) = (&self.anonymous, client) {
                limiter.check_key(&ip).map_err(|n| {
                    (
                        LimitScope::Anonymous,
                        n.wait_time_from(limiter.clock().now()),
                    )
                })?;
            }
            return Ok(());
        }
        let name = principal.name.to_string();
        match (self.overrides.get(&name), &self.per_token) {
            (Some(limiter), _) => limiter
                .check()
                .map_err(|n| (LimitScope::Token, n.wait_time_from(limiter.clock().now())))?,
            (None, Some(limiter)) => limiter
                .check_key(&name)
                .map_err(|n| (LimitScope::Token, n.wait_time_from(limiter.clock().now())))?,
            (None, None) => {}
        }
        if let Some(limiter) = self.per_class.get(&class) {
            limiter.check_key(&name).map_err(|n| {
                (
                    LimitScope::ToolClass,
                    n.wait_time_from(limiter.clock().now()),
                )
            })?;
        }
        Ok(())
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

    #[test]
    fn callers_whose_quota_refilled_are_forgotten() {
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
        let limits = CallerLimits::new(&config, &[]);
        for i in 0..500 {
            let caller = principal(&format!("oauth:user-{i}"));
            assert!(limits.check(&caller, None, ToolClass::Read).is_ok());
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

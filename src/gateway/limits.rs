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
}

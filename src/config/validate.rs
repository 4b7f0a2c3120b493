//! Pure semantic checks: no file system, no network, no environment. Every
//! problem is collected so an operator fixes a config in one pass.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use super::rules::{check_dealership_ids, is_e164, is_identifier, require_durations};
use super::{
    Cidr, Config, ConfigError, DealershipConfig, ResilienceConfig, TokenConfig, UpstreamConfig,
};
use crate::contract::Scope;

impl Config {
    /// Returns every semantic problem, or an empty list.
    pub fn validate(&self) -> Vec<ConfigError> {
        let mut errors = Vec::new();
        self.validate_server(&mut errors);
        if self.dealerships.is_empty() {
            errors.push(ConfigError::new(
                "dealerships",
                "at least one dealership is required",
            ));
        }
        let mut seen = BTreeSet::new();
        for (i, d) in self.dealerships.iter().enumerate() {
            let path = format!("dealerships[{i}]");
            if !seen.insert(d.id.as_str()) {
                errors.push(ConfigError::new(
                    format!("{path}.id"),
                    format!("duplicate dealership id {:?}", d.id),
                ));
            }
            self.validate_dealership(&path, d, &mut errors);
        }
        for (id, upstream) in &self.upstreams {
            validate_upstream(&format!("upstreams.{id}"), id, upstream, &mut errors);
        }
        let mut names = BTreeSet::new();
        for (i, t) in self.tokens.iter().enumerate() {
            let path = format!("tokens[{i}]");
            if !names.insert(t.name.as_str()) {
                errors.push(ConfigError::new(
                    format!("{path}.name"),
                    format!("duplicate token name {:?}", t.name),
                ));
            }
            // Names own records: a static token named like a signed-in
            // subject would share that subject's leads and bookings.
            if t.name
                .starts_with(crate::contract::principal::SIGNED_IN_PREFIX)
            {
                errors.push(ConfigError::new(
                    format!("{path}.name"),
                    format!(
                        "must not start with {:?}: names with it are the OAuth subjects'",
                        crate::contract::principal::SIGNED_IN_PREFIX
                    ),
                ));
            }
            self.validate_token(&path, t, &mut errors);
        }
        super::leads::validate(self, &mut errors);
        super::oauth::validate(self, &mut errors);
        super::tasks::validate(self, &mut errors);
        super::mirror::validate(self, &mut errors);
        super::inbound::validate(self, &mut errors);
        super::events::validate(self, &mut errors);
        super::quotas::validate(self, &mut errors);
        super::store::validate(self, &mut errors);
        super::status::validate(self, &mut errors);
        super::privacy::validate(self, &mut errors);
        super::aap::validate(self, &mut errors);
        errors
    }

    fn validate_server(&self, errors: &mut Vec<ConfigError>) {
        let s = &self.server;
        if s.listen.parse::<SocketAddr>().is_err() {
            errors.push(ConfigError::new(
                "server.listen",
                format!("{:?} is not an address like 127.0.0.1:8787", s.listen),
            ));
        }
        if !s.path.starts_with('/') {
            errors.push(ConfigError::new("server.path", "must start with /"));
        }
        if s.max_request_bytes < 1024 {
            errors.push(ConfigError::new(
                "server.max_request_bytes",
                "must be at least 1024",
            ));
        }
        require_durations(
            "server",
            &[
                ("header_read_timeout", s.header_read_timeout),
                ("body_read_timeout", s.body_read_timeout),
                ("idle_timeout", s.idle_timeout),
                ("overflow_grace", s.overflow_grace),
            ],
            errors,
        );
        if s.max_connections == 0 {
            errors.push(ConfigError::new(
                "server.max_connections",
                "must be at least 1",
            ));
        }
        for (i, entry) in s.trusted_proxies.iter().enumerate() {
            if let Err(e) = entry.parse::<Cidr>() {
                errors.push(ConfigError::new(format!("server.trusted_proxies[{i}]"), e));
            }
        }
        let l = &self.limits;
        if l.max_limit == 0 || l.max_limit > 1000 {
            errors.push(ConfigError::new(
                "limits.max_limit",
                "must be between 1 and 1000",
            ));
        }
        if l.default_limit == 0 || l.default_limit > l.max_limit {
            errors.push(ConfigError::new(
                "limits.default_limit",
                "must be between 1 and limits.max_limit",
            ));
        }
        // Below ~1,000 a single detailed record may not fit.
        if l.max_result_tokens < 1_000 {
            errors.push(ConfigError::new(
                "limits.max_result_tokens",
                "must be at least 1000",
            ));
        }
    }

    fn validate_dealership(&self, path: &str, d: &DealershipConfig, errors: &mut Vec<ConfigError>) {
        if !is_identifier(&d.id) {
            errors.push(ConfigError::new(
                format!("{path}.id"),
                "use 1-64 characters from a-z, 0-9, - and _",
            ));
        }
        if d.timezone.parse::<chrono_tz::Tz>().is_err() {
            errors.push(ConfigError::new(
                format!("{path}.timezone"),
                format!("unknown IANA time zone {:?}", d.timezone),
            ));
        }
        if !(d.currency.len() == 3 && d.currency.chars().all(|c| c.is_ascii_uppercase())) {
            errors.push(ConfigError::new(
                format!("{path}.currency"),
                "must be an ISO 4217 code such as USD",
            ));
        }
        for (i, phone) in d.phones.iter().enumerate() {
            if !is_e164(&phone.number) {
                errors.push(ConfigError::new(
                    format!("{path}.phones[{i}].number"),
                    "must be E.164, e.g. +15125550100",
                ));
            }
        }
        for (i, hours) in d.hours.iter().enumerate() {
            for (day, range) in &hours.weekly {
                if !is_hours_range(range) {
                    let day = serde_json::to_value(day)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    errors.push(ConfigError::new(
                        format!("{path}.hours[{i}].weekly.{day}"),
                        "must look like 09:00-18:00",
                    ));
                }
            }
        }
        validate_fees(path, d, errors);
        for (domain, upstream_id) in &d.routes {
            let at = format!("{path}.routes.{}", domain.as_str());
            match self.upstreams.get(upstream_id) {
                None => errors.push(ConfigError::new(
                    at,
                    format!("no upstream with id {upstream_id:?}"),
                )),
                Some(u) if !u.kind().may_serve(*domain) => errors.push(ConfigError::new(
                    at,
                    format!(
                        "upstream {upstream_id:?} cannot serve the {} domain",
                        domain.as_str()
                    ),
                )),
                Some(_) => {}
            }
        }
    }

    fn validate_token(&self, path: &str, t: &TokenConfig, errors: &mut Vec<ConfigError>) {
        check_dealership_ids(self, &format!("{path}.dealerships"), &t.dealerships, errors);
        if t.scopes.is_empty() {
            errors.push(ConfigError::new(
                format!("{path}.scopes"),
                "list at least one scope",
            ));
        }
        for (i, s) in t.scopes.iter().enumerate() {
            if Scope::parse(s).is_none() {
                errors.push(ConfigError::new(
                    format!("{path}.scopes[{i}]"),
                    format!(
                        "unknown scope {s:?}; known: {}",
                        Scope::ALL
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
    }
}

/// A dealership's fees: named (1-120 characters, each name once), not
/// negative, in the dealership's currency.
fn validate_fees(path: &str, d: &DealershipConfig, errors: &mut Vec<ConfigError>) {
    let mut names = BTreeSet::new();
    for (i, fee) in d.fees.iter().flatten().enumerate() {
        let at = format!("{path}.fees[{i}]");
        let name = fee.name.trim();
        if name.is_empty()
            || fee.name.chars().count() > 120
            || fee.name.chars().any(char::is_control)
        {
            errors.push(ConfigError::new(
                format!("{at}.name"),
                "must be 1-120 characters with no control characters",
            ));
        } else if !names.insert(name.to_lowercase()) {
            errors.push(ConfigError::new(
                format!("{at}.name"),
                format!("{name:?} is listed twice"),
            ));
        }
        if fee.amount.amount < 0 {
            errors.push(ConfigError::new(
                format!("{at}.amount.amount"),
                "must not be negative",
            ));
        }
        if fee.amount.currency != d.currency {
            errors.push(ConfigError::new(
                format!("{at}.amount.currency"),
                format!("must be the dealership's currency, {}", d.currency),
            ));
        }
    }
}

fn validate_upstream(
    path: &str,
    id: &str,
    upstream: &UpstreamConfig,
    errors: &mut Vec<ConfigError>,
) {
    if !is_identifier(id) {
        errors.push(ConfigError::new(
            path,
            "upstream ids use 1-64 characters from a-z, 0-9, - and _",
        ));
    }
    check_vendor_quota(&format!("{path}.resilience"), upstream.resilience(), errors);
    upstream.kind().validate(path, errors);
}

/// A vendor quota the bridge can keep: no window may hold more than
/// `requests`, so a burst cannot be larger, and the margin is part of a window.
fn check_vendor_quota(path: &str, resilience: &ResilienceConfig, errors: &mut Vec<ConfigError>) {
    let Some(rate) = resilience.rate_limit else {
        return;
    };
    if rate.requests == 0 || rate.per.is_zero() {
        errors.push(ConfigError::new(
            format!("{path}.rate_limit"),
            "requests and per must be above zero",
        ));
    }
    if rate.burst.is_some_and(|b| b > rate.requests) {
        errors.push(ConfigError::new(
            format!("{path}.rate_limit.burst"),
            "must be at most requests: no window of the vendor's may hold more",
        ));
    }
    if resilience.quota_margin.is_some_and(|m| m > rate.per) {
        errors.push(ConfigError::new(
            format!("{path}.quota_margin"),
            "must be at most rate_limit.per",
        ));
    }
}

fn is_hours_range(s: &str) -> bool {
    crate::model::dealership::opening_span(s).is_some()
}

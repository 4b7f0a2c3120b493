//! What each kind of upstream config answers for itself: its resilience and
//! timeout, the domains it can serve, and the checks of its own keys. A new
//! kind implements [`UpstreamKind`] for its config and adds one arm to
//! `UpstreamConfig::kind`.

use std::time::Duration;

use super::leads::validate_email;
use super::rules::check_url;
use super::{
    AdfEmailConfig, AdfHttpConfig, ConfigError, FeedUpstreamConfig, ResilienceConfig,
    RestUpstreamConfig, SoapUpstreamConfig, catalog,
};
use crate::model::Domain;

pub trait UpstreamKind {
    /// Quota, retries and circuit breaker.
    fn resilience(&self) -> &ResilienceConfig;
    /// Timeout of one upstream request.
    fn timeout(&self) -> Duration;
    /// Whether a dealership may route `domain` here. REST and SOAP profiles
    /// declare their domains, which the build checks.
    fn may_serve(&self, _domain: Domain) -> bool {
        true
    }
    /// The problems of this kind's own keys, under `path`.
    fn validate(&self, path: &str, errors: &mut Vec<ConfigError>);
    /// The vendor profile it runs on (a built-in name or a file), if its kind has one.
    fn profile(&self) -> Option<&str> {
        None
    }
}

impl UpstreamKind for RestUpstreamConfig {
    fn resilience(&self) -> &ResilienceConfig {
        &self.resilience
    }
    fn timeout(&self) -> Duration {
        self.timeout
    }
    fn validate(&self, path: &str, errors: &mut Vec<ConfigError>) {
        check_url(&format!("{path}.base_url"), &self.base_url, errors);
        if let Some(url) = &self.token_url {
            check_url(&format!("{path}.token_url"), url, errors);
        }
        check_profile(path, &self.profile, errors);
    }
    fn profile(&self) -> Option<&str> {
        Some(&self.profile)
    }
}

impl UpstreamKind for SoapUpstreamConfig {
    fn resilience(&self) -> &ResilienceConfig {
        &self.resilience
    }
    fn timeout(&self) -> Duration {
        self.timeout
    }
    fn validate(&self, path: &str, errors: &mut Vec<ConfigError>) {
        check_url(&format!("{path}.base_url"), &self.base_url, errors);
        check_profile(path, &self.profile, errors);
    }
    fn profile(&self) -> Option<&str> {
        Some(&self.profile)
    }
}

/// Feeds only carry inventory.
impl UpstreamKind for FeedUpstreamConfig {
    fn resilience(&self) -> &ResilienceConfig {
        &self.resilience
    }
    fn timeout(&self) -> Duration {
        self.timeout
    }
    fn may_serve(&self, domain: Domain) -> bool {
        domain == Domain::Inventory
    }
    fn validate(&self, path: &str, errors: &mut Vec<ConfigError>) {
        check_url(&format!("{path}.url"), &self.url, errors);
        if !catalog::is_file_reference(&self.mapping)
            && catalog::builtin_mapping(&self.mapping).is_none()
        {
            errors.push(ConfigError::new(
                format!("{path}.mapping"),
                format!(
                    "no built-in mapping {:?}; built-ins: {}",
                    self.mapping,
                    catalog::MAPPINGS.join(", ")
                ),
            ));
        }
        if self.refresh_interval.as_secs() < 1 {
            errors.push(ConfigError::new(
                format!("{path}.refresh_interval"),
                "must be at least 1s",
            ));
        }
    }
}

/// ADF intakes only take leads.
impl UpstreamKind for AdfHttpConfig {
    fn resilience(&self) -> &ResilienceConfig {
        &self.resilience
    }
    fn timeout(&self) -> Duration {
        self.timeout
    }
    fn may_serve(&self, domain: Domain) -> bool {
        domain == Domain::Leads
    }
    fn validate(&self, path: &str, errors: &mut Vec<ConfigError>) {
        check_url(&format!("{path}.url"), &self.url, errors);
    }
}

impl UpstreamKind for AdfEmailConfig {
    fn resilience(&self) -> &ResilienceConfig {
        &self.resilience
    }
    fn timeout(&self) -> Duration {
        self.timeout
    }
    fn may_serve(&self, domain: Domain) -> bool {
        domain == Domain::Leads
    }
    fn validate(&self, path: &str, errors: &mut Vec<ConfigError>) {
        validate_email(path, self, errors);
    }
}

/// A built-in profile name must exist; a file is read (and checked) at build time.
fn check_profile(path: &str, profile: &str, errors: &mut Vec<ConfigError>) {
    if !catalog::is_file_reference(profile) && catalog::builtin_profile(profile).is_none() {
        errors.push(ConfigError::new(
            format!("{path}.profile"),
            format!(
                "no built-in profile {profile:?}; built-ins: {}",
                catalog::PROFILES.join(", ")
            ),
        ));
    }
}

//! The ADF lead sink kind: hands a rendered ADF document to a CRM's intake,
//! over HTTP POST or by e-mail. Delivery is never retried here: the lead
//! outbox owns retries, so they survive restarts.

mod email;
mod http;

use std::path::Path;
use std::sync::Arc;

use super::resilience::UpstreamPolicy;
use super::{AdapterError, BuildError, UpstreamAdapter, UpstreamInstance};
use crate::config::{AdfEmailConfig, AdfHttpConfig};
use crate::model::Domain;

/// A lead to hand to a CRM intake.
pub struct LeadDelivery<'a> {
    pub lead_id: &'a str,
    /// The ADF XML document, exactly as it is to be sent.
    pub document: &'a str,
    /// The same lead as named values, for a CRM API's JSON body
    /// (`LEAD_PARAMS` of the REST kind: `first_name`, `email`,
    /// `vehicle_make`, …); a value the lead does not have is empty.
    pub fields: &'a std::collections::BTreeMap<String, String>,
}

/// What the CRM intake answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliveryReceipt {
    /// The CRM's lead id, or the e-mail's Message-ID.
    pub reference: Option<String>,
}

enum Transport {
    Http(http::HttpIntake),
    Email(email::EmailIntake),
}

/// One CRM intake instance.
pub struct AdfSink {
    policy: Arc<UpstreamPolicy>,
    transport: Transport,
}

impl AdfSink {
    pub fn http(
        instance: &UpstreamInstance<'_>,
        config: &AdfHttpConfig,
        base: &Path,
    ) -> Result<Self, Vec<BuildError>> {
        Ok(Self {
            policy: instance.policy.clone(),
            transport: Transport::Http(http::HttpIntake::build(config, base)?),
        })
    }

    pub fn email(
        instance: &UpstreamInstance<'_>,
        config: &AdfEmailConfig,
        base: &Path,
    ) -> Result<Self, Vec<BuildError>> {
        Ok(Self {
            policy: instance.policy.clone(),
            transport: Transport::Email(email::EmailIntake::build(config, base)?),
        })
    }
}

impl UpstreamAdapter for AdfSink {
    fn domains(&self) -> &[Domain] {
        &[Domain::Leads]
    }

    fn policy(&self) -> &UpstreamPolicy {
        &self.policy
    }

    /// `adf_http` or `adf_email`.
    fn lead_channel(&self) -> Option<&'static str> {
        Some(match self.transport {
            Transport::Http(_) => "adf_http",
            Transport::Email(_) => "adf_email",
        })
    }

    /// One attempt, under the upstream's quota and circuit breaker.
    async fn deliver_lead(&self, lead: &LeadDelivery<'_>) -> Result<DeliveryReceipt, AdapterError> {
        self.policy
            .run(false, || async {
                match &self.transport {
                    Transport::Http(h) => h.send(lead).await,
                    Transport::Email(e) => e.send(lead).await,
                }
            })
            .await
    }
}

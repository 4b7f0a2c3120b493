//! ADF over HTTP: the document is POSTed as the raw body with the dealer's
//! token and an optional HMAC-SHA256 signature (the shape of GladiusCRM-style
//! intakes). Any 2xx is acceptance; 409 means the CRM already has this `<id>`.

use std::path::Path;

use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;
use sha2::Sha256;

use super::{DeliveryReceipt, LeadDelivery};
use crate::adapters::http::{send, status_error};
use crate::adapters::{AdapterError, BuildError};
use crate::config::{AdfHttpConfig, resolve_secret};

pub struct HttpIntake {
    client: reqwest::Client,
    url: reqwest::Url,
    token: Option<(String, SecretString)>,
    signature: Option<(String, SecretString)>,
}

impl HttpIntake {
    pub fn build(config: &AdfHttpConfig, base: &Path) -> Result<Self, Vec<BuildError>> {
        let mut problems = Vec::new();
        let url = reqwest::Url::parse(&config.url)
            .map_err(|e| problems.push(BuildError::at_key("url", e)))
            .ok();
        let mut secret = |name: &str, source: &Option<crate::config::SecretSource>| {
            source.as_ref().and_then(|s| {
                resolve_secret(s, base)
                    .map_err(|e| problems.push(BuildError::at_key(name, e)))
                    .ok()
            })
        };
        let token = secret("token", &config.token).map(|t| (config.token_param.clone(), t));
        let signature = secret("hmac_secret", &config.hmac_secret)
            .map(|k| (config.signature_header.clone(), k));
        let client = crate::net::client_builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| problems.push(BuildError::at_key("client", e)))
            .ok();
        match (url, client) {
            (Some(url), Some(client)) if problems.is_empty() => Ok(Self {
                client,
                url,
                token,
                signature,
            }),
            _ => Err(problems),
        }
    }

    pub async fn send(&self, lead: &LeadDelivery<'_>) -> Result<DeliveryReceipt, AdapterError> {
        let mut url = self.url.clone();
        if let Some((param, token)) = &self.token {
            url.query_pairs_mut()
                .append_pair(param, token.expose_secret());
        }
        let body = lead.document.as_bytes().to_vec();
        let mut request = self
            .client
            .post(url)
            .header("content-type", "application/xml; charset=utf-8");
        if let Some((header, key)) = &self.signature {
            request = request.header(header.as_str(), sign(key, &body));
        }
        let reply = send(request.body(body)).await?;
        let status = reply.status.as_u16();
        if status == 409 {
            // The intake already has a lead with this <id>: our earlier attempt got through.
            return Ok(DeliveryReceipt::default());
        }
        if !reply.status.is_success() {
            return Err(status_error(reply.status, &reply.headers, None));
        }
        let answer: Option<Value> = serde_json::from_slice(&reply.body).ok();
        if answer
            .as_ref()
            .and_then(|a| a.get("success"))
            .and_then(Value::as_bool)
            == Some(false)
        {
            return Err(AdapterError::Rejected {
                status,
                vendor_code: None,
            });
        }
        Ok(DeliveryReceipt {
            reference: answer.as_ref().and_then(reference),
        })
    }
}

/// The CRM's lead id, under the names intakes use for it.
fn reference(answer: &Value) -> Option<String> {
    ["leadId", "lead_id", "id"]
        .iter()
        .find_map(|k| match answer.get(k)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
}

/// Lower-case hex HMAC-SHA256 of the raw body.
pub fn sign(key: &SecretString, body: &[u8]) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key.expose_secret().as_bytes()) else {
        return String::new();
    };
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

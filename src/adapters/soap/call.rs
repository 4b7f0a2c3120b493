//! One SOAP call: an operation's templates rendered into an envelope, POSTed
//! with the profile's headers under the upstream's policy, the reply read.

use std::collections::BTreeMap;

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use secrecy::ExposeSecret;
use serde_json::Value;

use super::answer::{Reader, StatusCheck};
use super::envelope::{self, UsernameToken};
use super::profile::SoapOperationSpec;
use super::{NO_SECRETS, SoapAdapter};
use crate::adapters::mapping::ValuePath;
use crate::adapters::template::{Template, TemplateContext};
use crate::adapters::{AdapterError, BuildError, http};

/// A compiled operation.
pub(super) struct SoapOperation {
    pub name: &'static str,
    path: Template,
    action: Template,
    body: Template,
    pub records: ValuePath,
    pub per_day: bool,
    status: Option<StatusCheck>,
}

/// The parameter every operation has besides its own: the dealership's wall
/// clock, as STAR writes `CreationDateTime` (no offset).
pub(super) const NOW_LOCAL: &str = "now_local";

/// Compiles `spec` (at `<at>`, e.g. `repair_orders.closed`) against the
/// request parameters in `ctx`; every problem goes to `errors` with its key.
pub(super) fn compile_operation(
    name: &'static str,
    at: &str,
    spec: &SoapOperationSpec,
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> Option<SoapOperation> {
    let mut names = ctx.params.clone();
    names.insert(NOW_LOCAL.into(), String::new());
    let ctx = &TemplateContext {
        params: &names,
        ..*ctx
    };
    let before = errors.len();
    let mut template = |key: &str, text: &str| {
        Template::compile(text, ctx)
            .map_err(|e| errors.push(BuildError::in_profile(format!("{at}.{key}: {e}"))))
            .ok()
    };
    let path = template("path", &spec.path);
    let action = template("action", &spec.action);
    let body = template("body", &spec.body);
    let mut value_path = |key: &str, text: &str| {
        ValuePath::parse(text)
            .map_err(|e| errors.push(BuildError::in_profile(format!("{at}.{key}: {e}"))))
            .ok()
    };
    let records = value_path("records", &spec.records);
    let status = spec.status.as_ref().and_then(|s| {
        Some(StatusCheck {
            path: value_path("status.path", &s.path)?,
            success: s.success.clone(),
        })
    });
    // Catch a body that is not XML now, not on the first call: with every
    // placeholder left empty it must read as XML content.
    if let Some(body) = &body {
        let blank: BTreeMap<String, String> = ctx
            .vars
            .keys()
            .map(|k| (k.clone(), String::new()))
            .collect();
        let probe_ctx = TemplateContext {
            vars: &blank,
            ..*ctx
        };
        let probe = format!("<probe>{}</probe>", body.render(&probe_ctx));
        if super::xml::to_json(probe.as_bytes()).is_err() {
            errors.push(BuildError::in_profile(format!(
                "{at}.body: not well-formed XML"
            )));
        }
    }
    if errors.len() > before {
        return None;
    }
    Some(SoapOperation {
        name,
        path: path?,
        action: action?,
        body: body?,
        records: records?,
        per_day: spec.per_day,
        status,
    })
}

/// A request ready to send (and to send again on a retry).
struct Prepared {
    url: String,
    action: String,
    content_type: HeaderValue,
    /// Holds the password when the profile uses a UsernameToken: never log it.
    document: String,
}

impl SoapAdapter {
    /// One logical call with request parameters `params`, under the policy
    /// (quota, retries of these idempotent reads, circuit breaker).
    pub(super) async fn call(
        &self,
        op: &SoapOperation,
        params: &BTreeMap<String, String>,
    ) -> Result<Value, AdapterError> {
        let mut params = params.clone();
        let now = chrono::Utc::now().with_timezone(&self.dealership.timezone);
        params.insert(
            NOW_LOCAL.into(),
            now.format("%Y-%m-%dT%H:%M:%S").to_string(),
        );
        let params = &params;
        let prepared = self.prepare(op, params)?;
        self.policy
            .run(true, || self.send_once(op, &prepared, params))
            .await
    }

    fn prepare(
        &self,
        op: &SoapOperation,
        params: &BTreeMap<String, String>,
    ) -> Result<Prepared, AdapterError> {
        let raw = self.context(&self.vars, params);
        let escaped: BTreeMap<String, String> = params
            .iter()
            .map(|(k, v)| (k.clone(), envelope::escape(v).into_owned()))
            .collect();
        let xml = self.context(&self.xml_vars, &escaped);
        let action = op.action.render(&raw);
        let content_type = match &self.content_type {
            Some(ct) => ct.clone(),
            None => HeaderValue::from_str(&self.version.content_type(&action)).map_err(|_| {
                AdapterError::InvalidResponse("the SOAP action cannot go into a header".into())
            })?,
        };
        let token = self.credentials.as_ref().map(|c| UsernameToken {
            username: c.username.expose_secret(),
            password: c.password.expose_secret(),
        });
        Ok(Prepared {
            url: format!("{}{}", self.base_url, op.path.render(&raw)),
            document: envelope::envelope(self.version, token.as_ref(), &op.body.render(&xml)),
            action,
            content_type,
        })
    }

    fn context<'a>(
        &'a self,
        vars: &'a BTreeMap<String, String>,
        params: &'a BTreeMap<String, String>,
    ) -> TemplateContext<'a> {
        TemplateContext {
            vars,
            secrets: &NO_SECRETS,
            dealership_id: &self.dealership.id,
            params,
        }
    }

    async fn send_once(
        &self,
        op: &SoapOperation,
        prepared: &Prepared,
        params: &BTreeMap<String, String>,
    ) -> Result<Value, AdapterError> {
        let ctx = self.context(&self.vars, params);
        let mut request = self
            .http
            .post(&prepared.url)
            .header(CONTENT_TYPE, prepared.content_type.clone())
            .body(prepared.document.clone());
        if self.soap_action_header {
            request = request.header("SOAPAction", envelope::soap_action_value(&prepared.action));
        }
        // Rendered per attempt so `{uuid}` is fresh each time.
        for (name, template) in &self.headers {
            request = request.header(name, template.render(&ctx));
        }
        let reply = http::send(request).await?;
        let reader = Reader {
            profile: &self.profile_name,
            operation: op.name,
            errors: &self.errors,
        };
        reader.read(&reply, op.status.as_ref())
    }
}

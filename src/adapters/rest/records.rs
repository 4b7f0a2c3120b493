//! Record reads with request parameters (service menu, availability): one
//! request, a list of records at a path, each record's fields read by path as
//! text. What the fields mean is up to the caller.

use std::collections::BTreeMap;

use super::RestAdapter;
use super::fetch::Endpoint;
use super::profile::RecordsSpec;
use crate::adapters::mapping::ValuePath;
use crate::adapters::mapping::path::scalar_text;
use crate::adapters::template::{Template, TemplateContext};
use crate::adapters::{AdapterError, BuildError};

/// One record's fields, by canonical name.
pub type Fields = BTreeMap<String, String>;

pub(super) struct RecordsOp {
    spec: RecordsSpec,
    path: Template,
    query: Vec<(String, Template)>,
    records: Option<ValuePath>,
    fields: Vec<(String, ValuePath)>,
}

/// Compiles `spec` (found at `[at]` in the profile) for request parameters
/// `params`; `required` fields must be mapped, `optional` ones may be.
pub(super) fn compile(
    at: &str,
    spec: &RecordsSpec,
    ctx: &TemplateContext<'_>,
    params: &[&str],
    (required, optional): (&[&str], &[&str]),
    errors: &mut Vec<BuildError>,
) -> Option<RecordsOp> {
    let names = crate::adapters::template::param_names(params);
    let ctx = TemplateContext {
        params: &names,
        ..*ctx
    };
    let before = errors.len();
    let (path, query) = compile_request(at, &spec.path, &spec.query, &ctx, errors);
    for name in required {
        if !spec.fields.contains_key(*name) {
            errors.push(BuildError::in_profile(format!(
                "{at}.fields: {name} is required"
            )));
        }
    }
    let mut fields = Vec::new();
    for (name, text) in &spec.fields {
        if !required.contains(&name.as_str()) && !optional.contains(&name.as_str()) {
            errors.push(BuildError::in_profile(format!(
                "{at}.fields.{name}: not a field of this operation"
            )));
            continue;
        }
        match ValuePath::parse(text) {
            Ok(p) => fields.push((name.clone(), p)),
            Err(e) => errors.push(BuildError::in_profile(format!("{at}.fields.{name}: {e}"))),
        }
    }
    let records = match spec.records.as_str() {
        "" => None,
        p => ValuePath::parse(p)
            .map_err(|e| errors.push(BuildError::in_profile(format!("{at}.records: {e}"))))
            .ok(),
    };
    if errors.len() > before {
        return None;
    }
    Some(RecordsOp {
        spec: spec.clone(),
        path: path?,
        query,
        records,
        fields,
    })
}

/// Compiles a path and query templates found at `[at]`; problems go to `errors`.
pub(super) fn compile_request(
    at: &str,
    path: &str,
    query: &BTreeMap<String, String>,
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> (Option<Template>, Vec<(String, Template)>) {
    let mut template = |key: &str, text: &str| {
        Template::compile(text, ctx)
            .map_err(|e| errors.push(BuildError::in_profile(format!("{at}.{key}: {e}"))))
            .ok()
    };
    let path = template("path", path);
    let query = query
        .iter()
        .filter_map(|(k, v)| template(&format!("query.{k}"), v).map(|t| (k.clone(), t)))
        .collect();
    (path, query)
}

impl RestAdapter {
    /// Runs `op` with `params` and returns each record's mapped fields.
    pub(super) async fn read_records(
        &self,
        op: &RecordsOp,
        params: &BTreeMap<String, String>,
    ) -> Result<Vec<Fields>, AdapterError> {
        let endpoint = Endpoint {
            method: &op.spec.method,
            path: &op.path,
            query: &op.query,
            params,
            body: None,
        };
        let body = self.call(&endpoint, &[]).await?;
        let records = self.records_in(&body, op.records.as_ref())?;
        Ok(records
            .iter()
            .map(|r| {
                op.fields
                    .iter()
                    .filter_map(|(name, path)| {
                        let text = path.first(r).and_then(scalar_text)?;
                        (!text.is_empty()).then(|| (name.clone(), text))
                    })
                    .collect()
            })
            .collect())
    }
}

//! Requests, pagination and error classification for the REST adapter.

use bytes::Bytes;
use chrono::Utc;
use reqwest::Method;
use secrecy::ExposeSecret;
use serde_json::Value;

use super::auth::UpstreamAuth;
use super::profile::{ErrorClass, Pagination};
use super::{Operation, RestAdapter};
use crate::adapters::AdapterError;
use crate::adapters::http::{self, Reply, status_error};
use crate::adapters::mapping::ValuePath;
use crate::adapters::mapping::path::scalar_text;
use crate::adapters::template::{Template, TemplateContext};

impl RestAdapter {
    /// Reads every page of `endpoint`; the records of each page are at `records`
    /// (the whole answer when `None`). Also returns when the first page was asked
    /// for: the data is at least that fresh, and never claimed fresher.
    pub(super) async fn read_pages(
        &self,
        endpoint: &Endpoint<'_>,
        pagination: &Pagination,
        records_at: Option<&ValuePath>,
    ) -> Result<(Vec<Value>, chrono::DateTime<Utc>), AdapterError> {
        let mut records = Vec::new();
        let verified_at = Utc::now();
        let mut walk = PageWalk::default();
        loop {
            let body = self.call(endpoint, &walk.params(pagination)).await?;
            let batch = self.records_in(&body, records_at)?;
            let next = walk.next(pagination, &body, batch.len())?;
            let more = walk.advance(batch.len(), &next);
            records.extend(batch);
            if !more {
                break;
            }
        }
        Ok((records, verified_at))
    }

    /// One logical read under the upstream's policy (quota, retries, breaker).
    pub(super) async fn call(
        &self,
        endpoint: &Endpoint<'_>,
        params: &[(String, String)],
    ) -> Result<Value, AdapterError> {
        self.fetch(endpoint, params, None)
            .await
            .map(Fetched::into_value)
    }

    /// A read that answers [`Fetched::Same`] instead of parsing when the
    /// upstream says `known` is still current: a `304 Not Modified` to the
    /// validators it gave with it (ETag, Last-Modified), or the same bytes
    /// again with a success status.
    pub(super) async fn fetch(
        &self,
        endpoint: &Endpoint<'_>,
        params: &[(String, String)],
        known: Option<Known<'_>>,
    ) -> Result<Fetched, AdapterError> {
        self.policy
            .run(true, || self.call_once(endpoint, params, false, known))
            .await
    }

    /// One logical write. Only an `idempotent` write is retried: repeating a
    /// booking after a timeout could book twice.
    pub(super) async fn call_write(
        &self,
        endpoint: &Endpoint<'_>,
        idempotent: bool,
    ) -> Result<Value, AdapterError> {
        self.policy
            .run(idempotent, || self.call_once(endpoint, &[], true, None))
            .await
            .map(Fetched::into_value)
    }

    /// One attempt, with one token refresh if the upstream says the token is stale.
    /// `write`: an empty answer is a success (a read must have a body).
    async fn call_once(
        &self,
        endpoint: &Endpoint<'_>,
        params: &[(String, String)],
        write: bool,
        known: Option<Known<'_>>,
    ) -> Result<Fetched, AdapterError> {
        let mut refused = None;
        loop {
            let (request, generation) = self.request(endpoint, params, refused).await?;
            let request = match known {
                Some(k) => k.validators.conditional(request),
                None => request,
            };
            let reply = http::send(request).await?;
            if reply.status == reqwest::StatusCode::NOT_MODIFIED && known.is_some() {
                return Ok(Fetched::Same);
            }
            // The same success body classifies the same: no need to parse it again.
            if reply.status.is_success() && known.is_some_and(|k| *k.body == reply.body) {
                return Ok(Fetched::Same);
            }
            let bytes = reply.body.clone();
            let validators = Validators::of(&reply.headers);
            match self.classify(reply, write) {
                Err(Classified::Reauthenticate(status)) => {
                    if refused.is_some() || generation.is_none() {
                        return Err(AdapterError::Unauthorized { status });
                    }
                    refused = generation;
                }
                Err(Classified::Error(e)) => return Err(e),
                Ok(body) => return Ok(Fetched::New(body, bytes, validators)),
            }
        }
    }

    async fn request(
        &self,
        endpoint: &Endpoint<'_>,
        params: &[(String, String)],
        refused: Option<u64>,
    ) -> Result<(reqwest::RequestBuilder, Option<u64>), AdapterError> {
        let ctx = TemplateContext {
            vars: &self.vars,
            secrets: &self.secrets,
            dealership_id: &self.dealership.id,
            params: endpoint.params,
        };
        let method = Method::from_bytes(endpoint.method.as_bytes()).unwrap_or(Method::GET);
        // A parameter with nothing to say (an optional request value left empty) is left out.
        let mut query: Vec<(String, String)> = endpoint
            .query
            .iter()
            .map(|(k, t)| (k.clone(), t.render(&ctx)))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        query.extend_from_slice(params);
        let url = format!("{}{}", self.base_url, endpoint.path.render(&ctx));
        let mut request = self.http.request(method, url).query(&query);
        if let Some(body) = endpoint.body {
            request = request.json(body);
        }
        for (name, template) in &self.headers {
            request = request.header(name, template.render(&ctx));
        }
        let mut generation = None;
        request = match &self.auth {
            UpstreamAuth::None => request,
            UpstreamAuth::Basic { user, password } => {
                request.basic_auth(user.expose_secret(), Some(password.expose_secret()))
            }
            UpstreamAuth::Bearer(token) => request.bearer_auth(token.expose_secret()),
            UpstreamAuth::OAuth(client) => {
                let issued = client.token(&self.http, refused).await?;
                generation = Some(issued.generation);
                request.bearer_auth(issued.token.expose_secret())
            }
        };
        Ok((request, generation))
    }

    /// Turns a reply into JSON or a classified error. Upstream text never leaves
    /// this function: only the status and a vendor code the profile knows.
    fn classify(&self, reply: Reply, write: bool) -> Result<Value, Classified> {
        let body: Option<Value> = serde_json::from_slice(&reply.body).ok();
        let vendor = body.as_ref().and_then(|b| self.vendor_code(b));
        let status = reply.status.as_u16();
        if let Some((code, class)) = &vendor {
            let in_band_error = !reply.status.is_success() || self.is_in_band_error(body.as_ref());
            if in_band_error {
                tracing::warn!(profile = %self.profile_name, status, vendor_code = %code, "Upstream reported an error.");
                return Err(class_error(*class, status, code, &reply));
            }
        }
        if !reply.status.is_success() {
            tracing::warn!(profile = %self.profile_name, status, "Upstream answered with an error status.");
            if status == 401 {
                return Err(Classified::Reauthenticate(status));
            }
            return Err(Classified::Error(status_error(
                reply.status,
                &reply.headers,
                None,
            )));
        }
        // A write may answer with no body at all (204): nothing to read, nothing
        // wrong. An empty read would look like "no records": that is an error.
        if write && reply.body.is_empty() {
            return Ok(Value::Null);
        }
        let Some(body) = body else {
            tracing::warn!(profile = %self.profile_name, status, bytes = reply.body.len(), "Upstream answer is not JSON.");
            return Err(Classified::Error(AdapterError::InvalidResponse(
                "answer is not JSON".into(),
            )));
        };
        if self.is_in_band_error(Some(&body)) {
            tracing::warn!(profile = %self.profile_name, status, "Upstream reported an unknown in-band error.");
            return Err(Classified::Error(AdapterError::Rejected {
                status,
                vendor_code: None,
            }));
        }
        Ok(body)
    }

    fn vendor_code(&self, body: &Value) -> Option<(String, ErrorClass)> {
        let code = self
            .errors
            .code_paths
            .iter()
            .find_map(|p| p.first(body).and_then(scalar_text))?;
        let class = self.errors.spec.codes.get(&code)?;
        Some((code, *class))
    }

    fn is_in_band_error(&self, body: Option<&Value>) -> bool {
        let (Some(path), Some(spec), Some(body)) =
            (&self.errors.in_band, &self.errors.spec.in_band, body)
        else {
            return false;
        };
        let found = path.first(body);
        match (&spec.equals, &spec.not_equals) {
            (Some(bad), _) => found == Some(bad),
            (None, Some(good)) => found != Some(good),
            (None, None) => false,
        }
    }
}

impl RestAdapter {
    /// The records of one answer: the list at `records_at`, or the answer
    /// itself. A path that reaches nothing is no records; that is said once
    /// per path in the log (a profile's path that never matches would
    /// otherwise answer every read with an empty list, silently).
    pub(super) fn records_in(
        &self,
        body: &Value,
        records_at: Option<&ValuePath>,
    ) -> Result<Vec<Value>, AdapterError> {
        let list = match records_at {
            Some(path) => match path.first(body) {
                Some(v) => v,
                None => {
                    self.missing_records_path(path);
                    return Ok(Vec::new());
                }
            },
            None => body,
        };
        records_of(list)
    }

    fn missing_records_path(&self, path: &ValuePath) {
        let first = self
            .missing_records
            .lock()
            .is_ok_and(|mut seen| seen.insert(path.as_str().to_owned()));
        if first {
            tracing::warn!(
                upstream = self.policy.name(),
                profile = %self.profile_name,
                path = path.as_str(),
                "An answer has nothing at the profile's records path; it is read as no records. \
                 If the upstream has records, the path is wrong. (Said once per path.)"
            );
        }
    }
}

/// A list of records, or a broken answer.
fn records_of(list: &Value) -> Result<Vec<Value>, AdapterError> {
    match list {
        Value::Array(items) => Ok(items.clone()),
        // JSON APIs send lists as arrays: anything else is a broken answer, not one record.
        _ => Err(AdapterError::InvalidResponse(
            "records are not a list".into(),
        )),
    }
}

/// What one request is made of.
pub(super) struct Endpoint<'a> {
    pub method: &'a str,
    pub path: &'a Template,
    pub query: &'a [(String, Template)],
    /// Values of the request parameters the path and query use.
    pub params: &'a std::collections::BTreeMap<String, String>,
    /// A JSON body (writes). May carry customer data: never log it.
    pub body: Option<&'a Value>,
}

impl Operation {
    pub(super) fn endpoint(&self) -> Endpoint<'_> {
        Endpoint {
            method: &self.spec.method,
            path: &self.path,
            query: &self.query,
            params: &crate::adapters::template::NO_PARAMS,
            body: None,
        }
    }
}

enum Classified {
    Reauthenticate(u16),
    Error(AdapterError),
}

fn class_error(class: ErrorClass, status: u16, code: &str, reply: &Reply) -> Classified {
    match class.error(status, code, http::retry_after(&reply.headers)) {
        Some(error) => Classified::Error(error),
        None => Classified::Reauthenticate(status),
    }
}

/// An upstream answer: parsed (with its bytes and validators), or "what you
/// had is still current".
pub(super) enum Fetched {
    Same,
    New(Value, Bytes, Validators),
}

impl Fetched {
    /// The parsed answer. `Same` only answers a read that passed known bytes,
    /// which these callers never do.
    fn into_value(self) -> Value {
        match self {
            Fetched::New(body, _, _) => body,
            Fetched::Same => Value::Null,
        }
    }
}

/// An answer the caller already has: its bytes and the validators it came with.
#[derive(Clone, Copy)]
pub(super) struct Known<'a> {
    pub body: &'a Bytes,
    pub validators: &'a Validators,
}

/// What an answer's `ETag` and `Last-Modified` said, to ask next time
/// whether it changed (`If-None-Match`, `If-Modified-Since`).
#[derive(Debug, Clone, Default)]
pub(super) struct Validators {
    etag: Option<String>,
    last_modified: Option<String>,
}

impl Validators {
    fn of(headers: &reqwest::header::HeaderMap) -> Self {
        let text = |name| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        Self {
            etag: text(reqwest::header::ETAG),
            last_modified: text(reqwest::header::LAST_MODIFIED),
        }
    }

    fn conditional(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(etag) = &self.etag {
            request = request.header(reqwest::header::IF_NONE_MATCH, etag);
        }
        if let Some(at) = &self.last_modified {
            request = request.header(reqwest::header::IF_MODIFIED_SINCE, at);
        }
        request
    }
}

#[derive(Debug, Clone)]
pub(super) enum NextPage {
    Done,
    More,
    Cursor(String),
}

/// Where a paged read stands: pages and records so far, and the upstream's
/// cursor. Every paged read walks its pages with one.
#[derive(Debug, Default)]
pub(super) struct PageWalk {
    pages: u32,
    records: usize,
    cursor: Option<String>,
}

impl PageWalk {
    /// The number of the page to ask for next, from 0.
    pub(super) fn index(&self) -> usize {
        self.pages as usize
    }

    /// The query parameters of the next page.
    pub(super) fn params(&self, pagination: &Pagination) -> Vec<(String, String)> {
        page_params(pagination, self.pages, self.records, self.cursor.as_deref())
    }

    /// What follows the page just read: `body` holding `in_page` records.
    pub(super) fn next(
        &self,
        pagination: &Pagination,
        body: &Value,
        in_page: usize,
    ) -> Result<NextPage, AdapterError> {
        next_page(
            pagination,
            body,
            in_page,
            self.records + in_page,
            self.pages + 1,
        )
    }

    /// Counts a page of `in_page` records; false when it was the last.
    pub(super) fn advance(&mut self, in_page: usize, next: &NextPage) -> bool {
        self.pages += 1;
        self.records += in_page;
        match next {
            NextPage::Done => false,
            NextPage::More => true,
            NextPage::Cursor(cursor) => {
                self.cursor = Some(cursor.clone());
                true
            }
        }
    }
}

fn page_params(
    pagination: &Pagination,
    page: u32,
    fetched: usize,
    cursor: Option<&str>,
) -> Vec<(String, String)> {
    match pagination {
        Pagination::None => Vec::new(),
        Pagination::LimitOffset {
            limit_param,
            offset_param,
            page_size,
            ..
        } => {
            vec![
                (limit_param.clone(), page_size.to_string()),
                (offset_param.clone(), fetched.to_string()),
            ]
        }
        Pagination::PageNumber {
            page_param,
            size_param,
            page_size,
            first_page,
            ..
        } => {
            vec![
                (page_param.clone(), (first_page + page).to_string()),
                (size_param.clone(), page_size.to_string()),
            ]
        }
        Pagination::Cursor {
            cursor_param,
            size_param,
            page_size,
            ..
        } => {
            let mut params = Vec::new();
            if let (Some(param), Some(size)) = (size_param, page_size) {
                params.push((param.clone(), size.to_string()));
            }
            if let Some(cursor) = cursor {
                params.push((cursor_param.clone(), cursor.to_owned()));
            }
            params
        }
    }
}

fn next_page(
    pagination: &Pagination,
    body: &Value,
    in_page: usize,
    total_so_far: usize,
    pages: u32,
) -> Result<NextPage, AdapterError> {
    let number = |path: &Option<String>| {
        let path = crate::adapters::mapping::ValuePath::parse(path.as_deref()?).ok()?;
        path.first(body)
            .and_then(scalar_text)?
            .parse::<usize>()
            .ok()
    };
    let (next, max_pages) = match pagination {
        Pagination::None => return Ok(NextPage::Done),
        Pagination::LimitOffset {
            page_size,
            total,
            max_pages,
            ..
        } => {
            let more = match number(total) {
                Some(total) => total_so_far < total && in_page > 0,
                None => in_page >= *page_size as usize,
            };
            (
                if more { NextPage::More } else { NextPage::Done },
                *max_pages,
            )
        }
        Pagination::PageNumber {
            page_size,
            total_pages,
            max_pages,
            ..
        } => {
            let more = match number(total_pages) {
                Some(total) => (pages as usize) < total && in_page > 0,
                None => in_page >= *page_size as usize,
            };
            (
                if more { NextPage::More } else { NextPage::Done },
                *max_pages,
            )
        }
        Pagination::Cursor {
            next, max_pages, ..
        } => {
            let key = crate::adapters::mapping::ValuePath::parse(next)
                .ok()
                .and_then(|p| p.first(body).and_then(scalar_text));
            (key.map_or(NextPage::Done, NextPage::Cursor), *max_pages)
        }
    };
    if !matches!(next, NextPage::Done) && pages >= max_pages {
        return Err(AdapterError::InvalidResponse(format!(
            "more than {max_pages} pages"
        )));
    }
    Ok(next)
}

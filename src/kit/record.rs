//! `dms-bridge record`: the bridge runs as it does in production, with one
//! upstream's origins rerouted through recording proxies. Each exchange is
//! faked ([`super::pii`]) and written to the fixture set as it comes, until a
//! number of exchanges or a time is reached.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::fixtures::{self, FixtureError, FixtureSet, RecordedExchange, RecordedUrl, SetWriter};
use super::format::Format;
use super::pii::{self, Faker};
use super::proxy::{self, Exchange, ProxyError, Tap};
use super::reroute::{self, RerouteError};
use crate::config::{Config, UpstreamConfig};

/// When a recording ends; at least one must be set.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// After this many exchanges.
    pub calls: Option<usize>,
    /// After this long.
    pub duration: Option<Duration>,
}

/// Why a recording did not start.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("refusing an unbounded recording: give --calls N, --for DURATION, or both")]
    Unbounded,
    #[error("--calls must be at least 1")]
    NoCalls,
    #[error(transparent)]
    Reroute(#[from] RerouteError),
    #[error(transparent)]
    Fixtures(#[from] FixtureError),
    #[error(transparent)]
    Proxy(#[from] ProxyError),
}

/// A recording under way: the config to serve with, and the recorder.
pub struct Recording {
    /// The config with the upstream's origins pointing at the proxies.
    pub config: Config,
    pub recorder: Arc<Recorder>,
    /// The proxies, by the origin each stands for.
    pub proxies: BTreeMap<String, SocketAddr>,
}

/// Starts recording `upstream` of `cfg` into `out`: opens the set, starts a
/// proxy per origin (stopped by `proxies`), and fires `done` when a limit is
/// reached.
pub async fn start(
    cfg: &Config,
    upstream: &str,
    out: &Path,
    limits: Limits,
    done: CancellationToken,
    proxies: CancellationToken,
) -> Result<Recording, RecordError> {
    match limits {
        Limits {
            calls: None,
            duration: None,
        } => return Err(RecordError::Unbounded),
        Limits { calls: Some(0), .. } => return Err(RecordError::NoCalls),
        _ => {}
    }
    let origins = reroute::origins(cfg, upstream)?;
    let writer = SetWriter::create(out, set_for(cfg, upstream)?)?;
    let recorder = Arc::new(Recorder {
        writer: Mutex::new(writer),
        faker: Faker::random(),
        limit: limits.calls,
        done: done.clone(),
    });
    let mut to = BTreeMap::new();
    let mut addrs = BTreeMap::new();
    for origin in origins {
        let listen = SocketAddr::from(([127, 0, 0, 1], 0));
        let proxy = proxy::start(listen, &origin, recorder.clone(), proxies.child_token()).await?;
        to.insert(origin.clone(), format!("http://{}", proxy.addr));
        addrs.insert(origin, proxy.addr);
    }
    let mut config = cfg.clone();
    reroute::reroute(&mut config, upstream, &to)?;
    if let Some(duration) = limits.duration {
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(duration) => done.cancel(),
                _ = done.cancelled() => {}
            }
        });
    }
    Ok(Recording {
        config,
        recorder,
        proxies: addrs,
    })
}

/// The index of a new set: what was recorded, from where (paths only).
fn set_for(cfg: &Config, upstream: &str) -> Result<FixtureSet, RerouteError> {
    let urls = reroute::urls(cfg, upstream)?
        .into_iter()
        .map(|(key, url)| RecordedUrl {
            key: key.to_owned(),
            path: url::Url::parse(&url)
                .map(|u| u.path().to_owned())
                .unwrap_or_default(),
        })
        .collect();
    let (kind, profile) = match cfg.upstreams.get(upstream) {
        Some(UpstreamConfig::Rest(r)) => ("rest", Some(r.profile.clone())),
        Some(UpstreamConfig::Soap(s)) => ("soap", Some(s.profile.clone())),
        Some(UpstreamConfig::Feed(f)) => ("feed", Some(f.mapping.clone())),
        Some(UpstreamConfig::AdfHttp(_)) => ("adf_http", None),
        Some(UpstreamConfig::AdfEmail(_)) | None => ("unknown", None),
    };
    Ok(FixtureSet {
        schema_version: fixtures::SCHEMA_VERSION,
        upstream: upstream.to_owned(),
        kind: kind.to_owned(),
        profile,
        urls,
        recorded_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        recorded_by: format!("dms-bridge {}", env!("CARGO_PKG_VERSION")),
        exchanges: Vec::new(),
    })
}

/// The proxies' tap: fakes and writes each exchange, up to the limit.
pub struct Recorder {
    writer: Mutex<SetWriter>,
    faker: Faker,
    limit: Option<usize>,
    done: CancellationToken,
}

impl Recorder {
    /// Exchanges written so far.
    pub fn recorded(&self) -> usize {
        self.writer.lock().map(|w| w.len()).unwrap_or(0)
    }

    fn record(&self, exchange: &Exchange) -> Result<(), FixtureError> {
        let Ok(mut writer) = self.writer.lock() else {
            return Ok(());
        };
        if self.limit.is_some_and(|limit| writer.len() >= limit) {
            tracing::debug!(path = %exchange.request.path, "Past the recording's limit: forwarded, not recorded.");
            return Ok(());
        }
        let seq = writer.len() + 1;
        let recorded = self.faked(seq, exchange, &writer)?;
        writer.push(recorded)?;
        tracing::info!(exchange = seq, method = %exchange.request.method, path = %exchange.request.path, status = exchange.response.status.as_u16(), "Recorded.");
        if self.limit == Some(writer.len()) {
            self.done.cancel();
        }
        Ok(())
    }

    /// The exchange as the set keeps it, its bodies written.
    fn faked(
        &self,
        seq: usize,
        exchange: &Exchange,
        writer: &SetWriter,
    ) -> Result<RecordedExchange, FixtureError> {
        let (request, response) = (&exchange.request, &exchange.response);
        let method = request.method.as_str();
        let path = pii::scrub_path(&self.faker, &request.path);
        let query: Vec<(String, String)> =
            url::form_urlencoded::parse(request.query.as_deref().unwrap_or_default().as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
        let request_headers = headers(&request.headers, request_header_kept);
        let response_headers = headers(&response.headers, fixtures::kept_response_header);
        let body = |bytes: &[u8], headers: &BTreeMap<String, String>, request: bool| {
            let side = Side {
                seq,
                method,
                path: &path,
                request,
            };
            self.body(writer, &side, bytes, headers)
        };
        Ok(RecordedExchange {
            method: method.to_owned(),
            path: path.clone(),
            query: pii::scrub_query(&self.faker, &query, &path),
            match_key: fixtures::match_key(&request.headers, &request.body),
            request_body: body(&request.body, &request_headers, true)?,
            request_headers,
            status: response.status.as_u16(),
            body: body(&response.body, &response_headers, false)?,
            headers: response_headers,
            elapsed_ms: u64::try_from(exchange.elapsed.as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// Writes a body's faked file, if there is a body; its name.
    fn body(
        &self,
        writer: &SetWriter,
        side: &Side<'_>,
        bytes: &[u8],
        headers: &BTreeMap<String, String>,
    ) -> Result<Option<String>, FixtureError> {
        if bytes.is_empty() {
            return Ok(None);
        }
        let content_type = headers.get("content-type").map(String::as_str);
        let format = match fixtures::is_encoded(headers) {
            true => Format::Binary,
            false => Format::of(content_type, bytes),
        };
        let name = fixtures::body_file(side.seq, side.method, side.path, format, side.request);
        let scrubbed = pii::scrub_body(&self.faker, format, bytes, side.path);
        if let Some(why) = &scrubbed.warning {
            tracing::warn!(file = %name, reason = %why, "Body not readable as its format: only e-mail addresses and phone numbers in it were replaced.");
        }
        if format == Format::Binary {
            tracing::warn!(file = %name, "Binary or compressed body: kept as it came, not faked. Look through it before sharing the set.");
        }
        writer.write_body(&name, &scrubbed.body)?;
        Ok(Some(name))
    }
}

/// Which body of which exchange: what its file is named after.
struct Side<'a> {
    seq: usize,
    method: &'a str,
    path: &'a str,
    request: bool,
}

/// A request header worth keeping: not a credential, not one that only
/// describes this connection or trace.
fn request_header_kept(name: &str) -> bool {
    let noise = [
        "host",
        "content-length",
        "connection",
        "accept-encoding",
        "traceparent",
        "tracestate",
    ];
    pii::keep_header(name) && !noise.contains(&name)
}

/// The headers `keep` admits, by lower-case name (repeated ones joined).
fn headers(map: &http::HeaderMap, keep: fn(&str) -> bool) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in map {
        if !keep(name.as_str()) {
            continue;
        }
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        out.entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    out
}

impl Tap for Recorder {
    fn after(&self, exchange: &Exchange) {
        if let Err(e) = self.record(exchange) {
            tracing::error!(error = %e, "Recording an exchange failed.");
        }
    }

    fn failed(&self, request: &proxy::ProxyRequest, error: &str, _elapsed: Duration) {
        tracing::warn!(path = %request.path, %error, "The upstream did not answer; nothing recorded.");
    }
}

//! `dms-bridge replay`: a fixture set served on loopback as the upstream it
//! was recorded from, so a config pointing at it works offline.
//!
//! A request is matched on method, path and the set's `match` keys (SOAP
//! action and operation), then on its query: the exchange recorded with the
//! same query, else the one with the closest (fewest parameters differing; a
//! `REDACTED` value matches any). Exchanges recorded with the same request are
//! served in recorded order, the last one repeated. A request nothing matches
//! gets a 404 naming what was asked and what the set holds.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::fixtures::{LoadedSet, RecordedExchange, match_key};
use super::pii::REDACTED;
use crate::adapters::http::MAX_BODY_BYTES;

/// A request, as matching sees it.
#[derive(Debug, Clone)]
pub struct Asked {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub match_key: BTreeMap<String, String>,
}

struct Replayer {
    set: LoadedSet,
    /// Answers served so far per request group (by its first exchange).
    served: Mutex<HashMap<usize, usize>>,
}

/// Serves `set` on `listen` until `cancel` fires; the address it serves on.
pub async fn start(
    set: LoadedSet,
    listen: SocketAddr,
    cancel: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    let state = Arc::new(Replayer {
        set,
        served: Mutex::new(HashMap::new()),
    });
    // Requests as large as the recording proxy takes (axum's default is 2 MB).
    let app = axum::Router::new()
        .fallback(answer)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state);
    tokio::spawn(async move {
        let server = axum::serve(listener, app).with_graceful_shutdown(cancel.cancelled_owned());
        if let Err(e) = server.await {
            tracing::error!(error = %e, "Replay server stopped.");
        }
    });
    Ok(addr)
}

async fn answer(
    State(replay): State<Arc<Replayer>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let asked = Asked {
        method: method.to_string(),
        path: uri.path().to_owned(),
        query: url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect(),
        match_key: match_key(&headers, &body),
    };
    let picked = match replay.served.lock() {
        Ok(mut served) => pick(&replay.set.set.exchanges, &mut served, &asked),
        Err(_) => None,
    };
    match picked {
        Some(i) => recorded(&replay.set.set.exchanges[i], replay.set.bodies[i].clone()),
        None => unmatched(&replay.set.set.exchanges, &asked),
    }
}

/// The exchange to answer `asked` with, counting it as served.
pub fn pick(
    exchanges: &[RecordedExchange],
    served: &mut HashMap<usize, usize>,
    asked: &Asked,
) -> Option<usize> {
    let candidates: Vec<usize> = (0..exchanges.len())
        .filter(|&i| {
            let e = &exchanges[i];
            e.method.eq_ignore_ascii_case(&asked.method)
                && e.path == asked.path
                && e.match_key == asked.match_key
        })
        .collect();
    let closest = candidates
        .iter()
        .copied()
        .min_by_key(|&i| distance(&exchanges[i].query, &asked.query))?;
    let group: Vec<usize> = candidates
        .into_iter()
        .filter(|&i| exchanges[i].query == exchanges[closest].query)
        .collect();
    let count = served.entry(group[0]).or_insert(0);
    let at = group[(*count).min(group.len() - 1)];
    *count += 1;
    Some(at)
}

/// Parameters of one query not in the other, both ways; a recorded
/// `REDACTED` value stands for any value.
fn distance(recorded: &[(String, String)], asked: &[(String, String)]) -> usize {
    let mut left: Vec<&(String, String)> = asked.iter().collect();
    let mut missing = 0;
    for (name, value) in recorded {
        let found = left
            .iter()
            .position(|(n, v)| n == name && (v == value || value == REDACTED));
        match found {
            Some(at) => {
                left.remove(at);
            }
            None => missing += 1,
        }
    }
    missing + left.len()
}

fn recorded(exchange: &RecordedExchange, body: Option<Bytes>) -> Response {
    let mut response = Response::new(Body::from(body.unwrap_or_default()));
    *response.status_mut() = StatusCode::from_u16(exchange.status).unwrap_or(StatusCode::OK);
    for (name, value) in &exchange.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// `GET /path?a=1 [soap_action=…]`
fn describe(
    method: &str,
    path: &str,
    query: &[(String, String)],
    key: &BTreeMap<String, String>,
) -> String {
    let mut text = format!("{method} {path}");
    if !query.is_empty() {
        let q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        text.push('?');
        text.push_str(&q.join("&"));
    }
    if !key.is_empty() {
        let k: Vec<String> = key.iter().map(|(k, v)| format!("{k}={v}")).collect();
        text.push_str(&format!(" [{}]", k.join(", ")));
    }
    text
}

fn unmatched(exchanges: &[RecordedExchange], asked: &Asked) -> Response {
    let wanted = describe(&asked.method, &asked.path, &asked.query, &asked.match_key);
    let mut recorded: Vec<String> = exchanges
        .iter()
        .map(|e| describe(&e.method, &e.path, &e.query, &e.match_key))
        .collect();
    recorded.dedup();
    tracing::warn!(asked = %wanted, "Replay: no recorded exchange matches this request.");
    let body = json!({
        "error": "no recorded exchange matches this request (method, path and match keys must be equal; the query may differ)",
        "asked": {
            "method": asked.method,
            "path": asked.path,
            "query": asked.query,
            "match": asked.match_key,
        },
        "recorded": recorded,
    });
    (StatusCode::NOT_FOUND, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(query: &[(&str, &str)]) -> Vec<(String, String)> {
        query
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    fn exchange(method: &str, path: &str, query: &[(&str, &str)], status: u16) -> RecordedExchange {
        RecordedExchange {
            method: method.into(),
            path: path.into(),
            query: pairs(query),
            match_key: BTreeMap::new(),
            request_headers: BTreeMap::new(),
            request_body: None,
            status,
            headers: BTreeMap::new(),
            body: None,
            elapsed_ms: 0,
        }
    }

    fn asked(method: &str, path: &str, query: &[(&str, &str)]) -> Asked {
        Asked {
            method: method.into(),
            path: path.into(),
            query: pairs(query),
            match_key: BTreeMap::new(),
        }
    }

    #[test]
    fn exact_then_closest_then_in_order_repeating_the_last() {
        let set = [
            exchange("GET", "/ros", &[("page", "1")], 200),
            exchange("GET", "/ros", &[("page", "2")], 201),
            exchange("GET", "/ros", &[("page", "1")], 202),
            exchange("POST", "/token", &[("api_key", REDACTED)], 203),
        ];
        let mut served = HashMap::new();
        let mut next = |a: Asked| pick(&set, &mut served, &a).map(|i| set[i].status);
        assert_eq!(next(asked("GET", "/ros", &[("page", "1")])), Some(200));
        assert_eq!(next(asked("GET", "/ros", &[("page", "2")])), Some(201));
        assert_eq!(next(asked("GET", "/ros", &[("page", "1")])), Some(202));
        assert_eq!(
            next(asked("GET", "/ros", &[("page", "1")])),
            Some(202),
            "the last repeats"
        );
        assert_eq!(
            next(asked("GET", "/ros", &[("page", "2"), ("x", "y")])),
            Some(201),
            "closest query"
        );
        assert_eq!(
            next(asked("POST", "/token", &[("api_key", "real")])),
            Some(203),
            "a redacted value matches any"
        );
        assert_eq!(next(asked("GET", "/other", &[])), None);
        assert_eq!(next(asked("DELETE", "/ros", &[("page", "1")])), None);
    }

    #[test]
    fn soap_requests_to_one_path_are_told_apart_by_their_keys() {
        let mut a = exchange("POST", "/svc", &[], 200);
        a.match_key.insert("soap_action".into(), "urn:A".into());
        let mut b = exchange("POST", "/svc", &[], 201);
        b.match_key.insert("soap_action".into(), "urn:B".into());
        let set = [a, b];
        let mut asked_b = asked("POST", "/svc", &[]);
        asked_b
            .match_key
            .insert("soap_action".into(), "urn:B".into());
        assert_eq!(pick(&set, &mut HashMap::new(), &asked_b), Some(1));
        assert_eq!(
            pick(&set, &mut HashMap::new(), &asked("POST", "/svc", &[])),
            None
        );
    }
}

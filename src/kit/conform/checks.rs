//! The checks of `conform`, in the order the report lists them.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::remote::{Era, Remote};
use super::{Options, Report};
use crate::kit::bridge::{Answer, Calls};
use crate::kit::verify::canonical::{self, Dealer};
use crate::kit::verify::report::Check;

/// The canonical tools every deployment serves (TOOLSET.md).
const CANONICAL_TOOLS: &[&str] = &[
    "dealership.list",
    "dealership.get",
    "inventory.search",
    "inventory.get",
    "inventory.facets",
    "leads.create",
    "leads.get",
    "leads.list",
    "deals.request_trade_value",
    "service.check_availability",
    "service.book_appointment",
    "service.cancel_appointment",
    "service.get_appointment",
    "service.get_repair_order",
    "service.list_repair_orders",
];

/// Tools whose only required argument is a dealership.
const DEALERSHIP_TOOLS: &[&str] = &[
    "dealership.get",
    "inventory.search",
    "inventory.facets",
    "leads.list",
    "service.list_repair_orders",
];

/// Customer data conform sends in calls that must fail; none of it may come back.
const PLANTED: &[&str] = &["conform.check@example.com", "Quentin", "Marlowe"];

pub async fn run(options: &Options) -> Report {
    let started = Instant::now();
    let checked_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let token = options.token.as_deref();
    let mut checks = front_door(&options.url, token).await;
    let sessions = Remote::connect(&options.url, token, Era::Sessions).await;
    let stateless = Remote::connect(&options.url, token, Era::Stateless).await;
    let mut versions = Vec::new();
    for (era, connected) in [("2025 (sessions)", &sessions), ("2026-07-28", &stateless)] {
        checks.push(match connected {
            Ok(remote) => {
                if let Some(info) = remote.server() {
                    versions.push(info.protocol_version.to_string());
                }
                Check::pass(
                    "protocol",
                    "era answers",
                    format!("{era}: {} tools", remote.tools.len()),
                )
            }
            Err(e) => Check::fail("protocol", "era answers", format!("{era}: {e}")),
        });
    }
    if let (Ok(a), Ok(b)) = (&sessions, &stateless) {
        let names = |r: &Remote| {
            r.tools
                .iter()
                .map(|t| t.name.to_string())
                .collect::<BTreeSet<_>>()
        };
        checks.push(if names(a) == names(b) {
            Check::pass("protocol", "same tools in both eras", "")
        } else {
            Check::fail(
                "protocol",
                "same tools in both eras",
                "tools/list differs between eras",
            )
        });
    }
    checks.push(unknown_method(&options.url, token).await);
    let server = sessions
        .as_ref()
        .ok()
        .and_then(|r| r.server())
        .and_then(|i| {
            i.server_info
                .as_ref()
                .map(|s| format!("{} {}", s.name, s.version))
        });
    if let Ok(remote) = &sessions {
        checks.extend(tool_contract(remote));
        checks.extend(levels(remote));
        checks.extend(on_data(remote, options).await);
    }
    for remote in [sessions, stateless].into_iter().flatten() {
        remote.close().await;
    }
    Report {
        url: options.url.clone(),
        checked_at,
        server,
        protocol_versions: versions,
        checks,
        seconds: started.elapsed().as_secs_f64(),
    }
}

fn http() -> reqwest::Client {
    crate::net::install_tls_provider();
    crate::net::client_builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap_or_default()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"dms-bridge-conform","version":"1"}}}"#;

/// POSTs one JSON-RPC message; `stateless` names its method for the 2026-07-28
/// era, whose requests carry their version and method in headers too.
async fn post(
    url: &str,
    token: Option<&str>,
    body: &str,
    stateless: Option<&str>,
) -> Option<reqwest::Response> {
    let mut request = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(method) = stateless {
        request = request
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
    }
    request.send().await.ok()
}

/// A forged token is refused; a caller without one is refused or served anonymously.
async fn front_door(url: &str, token: Option<&str>) -> Vec<Check> {
    let forged = format!("conform-forged-{:016x}", fastrand::u64(..));
    let mut checks = Vec::new();
    checks.push(match post(url, Some(&forged), INITIALIZE, None).await {
        Some(r) if r.status() == 401 => {
            let challenge = r.headers().contains_key("www-authenticate");
            if challenge {
                Check::pass(
                    "auth",
                    "a forged token is refused",
                    "401 with WWW-Authenticate",
                )
            } else {
                Check::warn(
                    "auth",
                    "a forged token is refused",
                    "401 without WWW-Authenticate",
                )
            }
        }
        Some(r) => Check::fail(
            "auth",
            "a forged token is refused",
            format!("answered {}", r.status()),
        ),
        None => Check::fail(
            "auth",
            "a forged token is refused",
            "the deployment did not answer",
        ),
    });
    checks.push(match post(url, None, INITIALIZE, None).await {
        Some(r) if r.status() == 401 => {
            Check::pass("auth", "no token", "refused: sign-in required")
        }
        Some(r) if r.status().is_success() => Check::pass(
            "auth",
            "no token",
            "served anonymously (a dealership allows anonymous inventory)",
        ),
        Some(r) => Check::fail("auth", "no token", format!("answered {}", r.status())),
        None => Check::fail("auth", "no token", "the deployment did not answer"),
    });
    if token.is_none() {
        checks.push(Check::warn(
            "auth",
            "token",
            "no --token given: only what anonymous callers may do was checked",
        ));
    }
    checks
}

/// An unknown method is -32601, in the stateless era (no session needed).
async fn unknown_method(url: &str, token: Option<&str>) -> Check {
    // A well-formed 2026-07-28 request in every other respect: its version,
    // the client's capabilities and name, the method in a header too.
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"conform/unknown","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{},
        "io.modelcontextprotocol/clientInfo":{"name":"dms-bridge-conform","version":"1"}}}}"#;
    let name = "an unknown method is -32601";
    let Some(answer) = post(url, token, body, Some("conform/unknown")).await else {
        return Check::fail("protocol", name, "the deployment did not answer");
    };
    let text = answer.text().await.unwrap_or_default();
    let message = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .unwrap_or(&text)
        .trim();
    let code = serde_json::from_str::<Value>(message)
        .ok()
        .and_then(|v| v["error"]["code"].as_i64());
    if code == Some(-32601) {
        Check::pass("protocol", name, "")
    } else {
        Check::fail("protocol", name, format!("answered {code:?}"))
    }
}

fn tool_contract(remote: &Remote) -> Vec<Check> {
    let missing: Vec<String> = CANONICAL_TOOLS
        .iter()
        .filter(|t| !remote.serves(t))
        .map(|t| format!("{t} is not served"))
        .collect();
    let unschemed: Vec<String> = remote
        .tools
        .iter()
        .filter(|t| t.output_schema.is_none())
        .map(|t| format!("{} has no output schema", t.name))
        .collect();
    let unsafe_names: Vec<String> = remote
        .tools
        .iter()
        .filter(|t| !crate::tools::is_host_safe(&t.name))
        .map(|t| t.name.to_string())
        .collect();
    let mut checks = vec![
        Check::from_problems("tools", "every canonical tool", &missing),
        Check::from_problems("tools", "input and output schemas", &unschemed),
    ];
    checks.push(if unsafe_names.is_empty() {
        Check::pass("tools", "names every host accepts", "")
    } else {
        Check::warn(
            "tools",
            "names every host accepts",
            format!(
                "{} canonical (dotted) names: Claude and OpenAI hosts refuse them",
                unsafe_names.len()
            ),
        )
    });
    checks
}

/// Each AutomotiveMCP level the server claims, backed by what it serves.
fn levels(remote: &Remote) -> Vec<Check> {
    let Some(info) = remote.server() else {
        return vec![Check::fail("levels", "claims", "no server information")];
    };
    let claims = info
        .capabilities
        .experimental
        .as_ref()
        .and_then(|e| e.get("automotive_mcp"))
        .and_then(|a| a.get("domains"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if claims.is_empty() {
        return vec![Check::warn(
            "levels",
            "claims",
            "the server claims no AutomotiveMCP level",
        )];
    }
    let subscribes = info
        .capabilities
        .resources
        .as_ref()
        .and_then(|r| r.subscribe)
        .unwrap_or(false);
    let mut problems = Vec::new();
    let mut claimed = Vec::new();
    for (domain, claim) in &claims {
        let level = claim["level"].as_u64().unwrap_or(0);
        claimed.push(format!("{domain} {level}"));
        let has_tools = CANONICAL_TOOLS
            .iter()
            .filter(|t| t.starts_with(&format!("{domain}.")))
            .any(|t| remote.serves(t));
        if level >= 2 && !has_tools {
            problems.push(format!(
                "{domain} claims Level {level} but serves none of its tools"
            ));
        }
        if level >= 3 && !(remote.serves("events.list") && subscribes) {
            problems.push(format!(
                "{domain} claims Level 3 but events.list or resource subscriptions are missing"
            ));
        }
    }
    let mut check = Check::from_problems("levels", "claims backed by what is served", &problems);
    if problems.is_empty() {
        check.detail = claimed.join(", ");
    }
    vec![check]
}

/// The checks on the deployment's own data: the canonical contract, AAP's
/// rules and tenancy.
async fn on_data(remote: &Remote, options: &Options) -> Vec<Check> {
    let mut checks = Vec::new();
    let listed = match remote.call("dealership.list", json!({})).await {
        Answer::Ok(list) => list["items"].as_array().cloned().unwrap_or_default(),
        Answer::Error(e) => {
            return vec![Check::fail("tools", "dealership.list", e.to_string())];
        }
    };
    checks.push(Check::pass(
        "tools",
        "dealership.list",
        format!("{} dealership(s)", listed.len()),
    ));
    let serving = |domain: &str| {
        listed.iter().find(|d| {
            d["domains"]
                .as_array()
                .is_some_and(|ds| ds.iter().any(|x| x == domain))
        })
    };
    for domain in ["inventory", "repair_orders"] {
        let Some(dealership) = serving(domain) else {
            continue;
        };
        let Some(id) = dealership["id"].as_str() else {
            continue;
        };
        let profile = match remote
            .call("dealership.get", json!({ "dealership_id": id }))
            .await
        {
            Answer::Ok(p) => p,
            Answer::Error(_) => continue,
        };
        let dealer = Dealer {
            id,
            timezone: profile["timezone"]
                .as_str()
                .and_then(|t| t.parse().ok())
                .unwrap_or(chrono_tz::UTC),
            currency: profile["currency"].as_str().unwrap_or("USD"),
        };
        checks.extend(match domain {
            "inventory" => canonical::inventory(remote, &dealer).await,
            _ => canonical::repair_orders(remote, &dealer).await,
        });
    }
    if let Some(leads) = serving("leads").and_then(|d| d["id"].as_str()) {
        checks.extend(consent_first(remote, leads).await);
    }
    checks.extend(tenancy(remote, options).await);
    checks.push(match &options.sandbox_dealership {
        Some(sandbox) => duplicates_and_replays(remote, sandbox).await,
        None => Check::warn(
            "aap",
            "duplicates and idempotency",
            "not checked: they send leads (give --sandbox-dealership)",
        ),
    });
    checks
}

fn customer() -> Value {
    json!({ "first_name": "Quentin", "last_name": "Marlowe", "email": "conform.check@example.com" })
}

/// No lead without consent, checked as a dry run (nothing stored or sent);
/// the refusal quotes none of the customer's data.
async fn consent_first(remote: &Remote, dealership: &str) -> Vec<Check> {
    let args = json!({ "dealership_id": dealership, "customer": customer(),
                       "source_agent": "dms-bridge conform", "dry_run": true });
    let answer = remote.call("leads.create", args).await;
    let (name, pii) = ("consent before any lead", "errors quote no customer data");
    match answer {
        Answer::Error(e) => {
            let code = e["error"]["code"].as_str().unwrap_or("?").to_owned();
            let text = e.to_string();
            let echoed: Vec<String> = PLANTED
                .iter()
                .filter(|p| text.contains(**p))
                .map(|p| format!("the refusal quotes {p:?}"))
                .collect();
            vec![
                if code == "leads.consent_required" {
                    Check::pass("aap", name, "a lead without a grant is refused")
                } else {
                    Check::fail("aap", name, format!("refused with {code}"))
                },
                Check::from_problems("pii", pii, &echoed),
            ]
        }
        Answer::Ok(_) => vec![Check::fail(
            "aap",
            name,
            "a lead without consent was accepted (dry run)",
        )],
    }
}

/// A dealership the token may not use is refused by every tool that names
/// one, with the same code whether it exists or not.
async fn tenancy(remote: &Remote, options: &Options) -> Vec<Check> {
    let invented = format!("conform-not-yours-{:08x}", fastrand::u32(..));
    let mut problems = Vec::new();
    for tool in DEALERSHIP_TOOLS {
        let mut codes = Vec::new();
        for id in std::iter::once(invented.as_str()).chain(options.other_dealership.as_deref()) {
            match remote.call(tool, json!({ "dealership_id": id })).await {
                Answer::Ok(_) => problems.push(format!("{tool} answered for {id}")),
                Answer::Error(e) => {
                    codes.push(e["error"]["code"].as_str().unwrap_or("?").to_owned())
                }
            }
        }
        if codes.len() == 2 && codes[0] != codes[1] {
            problems.push(format!(
                "{tool}: {} for an invented dealership, {} for another's: the difference tells which exist",
                codes[0], codes[1]
            ));
        }
    }
    let mut check = Check::from_problems("tenancy", "another dealership is refused", &problems);
    if problems.is_empty() && options.other_dealership.is_none() {
        check = Check::pass(
            "tenancy",
            "another dealership is refused",
            "an invented id only (give --other-dealership for one that exists)",
        );
    }
    vec![check]
}

/// In a sandbox: the same lead twice is one lead, and a replayed idempotency
/// key with another payload is refused.
async fn duplicates_and_replays(remote: &Remote, dealership: &str) -> Check {
    let key = format!("conform-{:016x}", fastrand::u64(..));
    let consent = json!({ "granted_at": chrono::Utc::now().to_rfc3339(), "allowed_channels": ["email"],
                          "consent_text": "May the dealership e-mail me about this vehicle?",
                          "scope": ["lead_submission"] });
    let lead = |message: &str| {
        json!({ "dealership_id": dealership, "customer": customer(), "consent": consent,
                "source_agent": "dms-bridge conform", "message": message, "idempotency_key": key })
    };
    let first = remote.call("leads.create", lead("conform check")).await;
    let Answer::Ok(first) = first else {
        return Check::fail(
            "aap",
            "duplicates and idempotency",
            format!("the sandbox lead failed: {first:?}"),
        );
    };
    let mut problems = Vec::new();
    match remote.call("leads.create", lead("another message")).await {
        Answer::Error(e) if e["error"]["code"] == "leads.idempotency_conflict" => {}
        other => problems.push(format!(
            "a replayed key with another payload answered {other:?}"
        )),
    }
    let mut again = lead("conform check");
    again["idempotency_key"] = json!(format!("{key}-again"));
    match remote.call("leads.create", again).await {
        Answer::Ok(second)
            if second["status"] == "duplicate" || second["lead_id"] == first["lead_id"] => {}
        other => problems.push(format!("the same lead again answered {other:?}")),
    }
    Check::from_problems("aap", "duplicates and idempotency", &problems)
}

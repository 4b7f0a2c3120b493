//! The ordered steps every call goes through: tool lookup → argument schema →
//! parse → dealership scoping → scope → capability → semantic validation →
//! caller rate limits → read cache (single flight) → handler under a deadline →
//! result size limit → metrics, log line and audit record.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use rmcp::model::JsonObject;
use serde_json::{Value, json};
use tracing::Instrument;

use super::cache::{CacheInfo, Payload};
use super::{Gateway, write};
use crate::config::ToolClass;
use crate::contract::Principal;
use crate::contract::error::rate_limited;
use crate::contract::error::{ErrorCode, Problems, ToolError};
use crate::model::Domain;
use crate::store::{AuditRecord, argument_shape};
use crate::telemetry::client_log::{self, LogSink};
use crate::telemetry::door::Door;
use crate::telemetry::metrics::{CacheLabels, RateLimitLabels};
use crate::telemetry::notices;
use crate::telemetry::trace::{CURRENT, TraceContext};
use crate::tools::{AnyArgs, Check, Dealership, HandlerError, ToolContext, ToolId, unsupported};

/// A call that could not become a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// No tool by that name exists (a JSON-RPC error, per the MCP spec).
    UnknownTool,
}

/// Who is calling, from where, under which trace.
#[derive(Debug, Clone)]
pub struct Caller {
    pub principal: Arc<Principal>,
    /// Client address (HTTP), for anonymous quotas.
    pub client_ip: Option<IpAddr>,
    pub trace: TraceContext,
    /// The front door the call came in by, for the audit record and metrics.
    pub door: Door,
    /// Where progress reports go, when the client asked for them.
    pub progress: Option<Arc<dyn crate::telemetry::progress::ProgressSink>>,
    /// Where log messages go, when the client set a log level.
    pub log: Option<Arc<dyn LogSink>>,
}

/// A finished call.
#[derive(Debug)]
pub struct CallOutcome {
    pub result: Result<Payload, ToolError>,
    /// Present when the result went through the read cache.
    pub cache: Option<CacheInfo>,
    pub trace_id: String,
}

/// What the pipeline learned along the way, for the audit record.
#[derive(Default)]
struct Facts {
    dealership: Option<String>,
    adapter: Option<String>,
    cache: Option<CacheInfo>,
}

impl Gateway {
    /// Runs one tool call through the whole pipeline.
    pub async fn call_tool(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallOutcome, CallError> {
        let timeout = self.limits().call_timeout;
        self.call_tool_within(caller, name, arguments, timeout)
            .await
    }

    /// Runs one tool call through the whole pipeline under `timeout`.
    pub(super) async fn call_tool_within(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Option<JsonObject>,
        timeout: std::time::Duration,
    ) -> Result<CallOutcome, CallError> {
        let tool = ToolId::from_name(name).ok_or(CallError::UnknownTool)?;
        let started = Instant::now();
        let args = Value::Object(arguments.unwrap_or_default());
        let shape = argument_shape(&args);
        let span = tracing::info_span!("tool_call", trace_id = %caller.trace, tool = tool.name());
        crate::telemetry::otlp::join(&span, &caller.trace);
        let (result, facts) = CURRENT
            .scope(
                caller.trace.clone(),
                crate::telemetry::progress::scope(
                    caller.progress.clone(),
                    client_log::scope(
                        caller.log.clone(),
                        self.dispatch(tool, caller, args, timeout),
                    ),
                )
                .instrument(span.clone()),
            )
            .await;
        let elapsed = started.elapsed();
        let outcome = result.as_ref().err().map_or("ok", |e| e.code.as_str());
        self.metrics()
            .record_call(tool.name(), caller.door, outcome, elapsed);
        span.in_scope(|| {
            tracing::info!(door = caller.door.as_str(), principal = %caller.principal.name, dealership = facts.dealership.as_deref(), outcome,
                cache_hit = facts.cache.is_some_and(|c| c.hit), latency_us = elapsed.as_micros() as u64, "Tool call.");
        });
        if let Some(audit) = &self.inner.audit {
            audit
                .record(AuditRecord {
                    at: Utc::now(),
                    trace_id: caller.trace.trace_id.clone(),
                    door: Some(caller.door),
                    principal: caller.principal.name.to_string(),
                    dealership: facts.dealership.clone(),
                    tool: tool.name().to_owned(),
                    adapter: facts.adapter.clone(),
                    outcome: outcome.to_owned(),
                    latency_us: elapsed.as_micros() as u64,
                    cache_hit: facts.cache.is_some_and(|c| c.hit),
                    arg_shape: shape,
                })
                .await;
        }
        Ok(CallOutcome {
            result,
            cache: facts.cache,
            trace_id: caller.trace.trace_id.clone(),
        })
    }

    async fn dispatch(
        &self,
        tool: ToolId,
        caller: &Caller,
        args: Value,
        timeout: std::time::Duration,
    ) -> (Result<Payload, ToolError>, Facts) {
        let mut facts = Facts::default();
        let result = self.run(tool, caller, args, timeout, &mut facts).await;
        (result, facts)
    }

    async fn run(
        &self,
        tool: ToolId,
        caller: &Caller,
        args: Value,
        timeout: std::time::Duration,
        facts: &mut Facts,
    ) -> Result<Payload, ToolError> {
        let principal = caller.principal.as_ref();
        // Schema problems and semantic ones come back in one answer: arguments
        // that still parse (a bad pattern, a length) also get the semantic checks.
        let schema_problems = self.schema_problems(tool, &args)?;
        // serde_json objects keep keys sorted, so this is canonical.
        let canonical = tool.cacheable().then(|| args.to_string());
        // Hashed before parsing takes the arguments, and only for a write with a key.
        let request_hash = (tool.class() == ToolClass::Write
            && args.get("idempotency_key").is_some())
        .then(|| write::request_hash(&args));
        // Without the fields the schema refused, the rest may still parse and
        // get its semantic checks (a range, a VIN's check digit) in this answer.
        let rest = (!schema_problems.is_empty()).then(|| without_fields(&args, &schema_problems));
        let parsed = match (tool.spec().parse)(args) {
            Ok(parsed) => parsed,
            Err(e) => match rest.map(tool.spec().parse) {
                Some(Ok(parsed)) => parsed,
                Some(Err(_)) => {
                    return Err(schema_problems
                        .into_result()
                        .err()
                        .unwrap_or_else(ToolError::internal));
                }
                None => {
                    // The schema accepted it, so this is a gap between schema and type: say where, keep it generic.
                    tracing::warn!(error = %e, "Arguments passed the schema but not the parser.");
                    return Err(ToolError::invalid_arguments(vec![
                        crate::contract::error::Problem::new(
                            "",
                            "do not match the tool's inputSchema",
                        ),
                    ]));
                }
            },
        };
        // Only a dealership that exists is recorded: an unchecked id is caller text (possibly PII).
        facts.dealership = parsed
            .dealership_id()
            .filter(|id| self.dealership(id).is_some())
            .map(str::to_owned);
        let (dealership, cache_ttl) = match self.admit(tool, principal, parsed.as_ref(), facts) {
            Ok(admitted) => admitted,
            // Argument problems are reported before access ones, as they always were.
            Err(e) => {
                schema_problems.into_result()?;
                return Err(e);
            }
        };
        let mut check = Check::new(self.services(), dealership);
        parsed.validate(&mut check);
        check.after_schema(schema_problems).into_result()?;
        if let Err((scope, wait)) = self
            .inner
            .limits_by_caller
            .check(principal, caller.client_ip, tool.class())
            .await
        {
            self.metrics()
                .rate_limited
                .get_or_create(&RateLimitLabels {
                    scope: scope.as_str(),
                })
                .inc();
            return Err(rate_limited(scope.as_str(), wait));
        }
        let ctx = ToolContext {
            services: self.services(),
            tool,
            principal,
            dealership,
        };
        let once = request_hash.and_then(|hash| {
            parsed.idempotency_key().map(|key| write::Once {
                key: key.to_owned(),
                request_hash: hash,
                conflict: parsed.idempotency_conflict(),
            })
        });
        // One deadline for the call: waiting on a key's turn and the handler share it.
        let deadline = tokio::time::Instant::now() + timeout;
        let write = dealership
            .filter(|_| tool.class() == ToolClass::Write)
            .map(|d| write::Write {
                ctx,
                dealership: d,
                once,
                deadline,
            });
        let work = self.handle(ctx, parsed, deadline);
        let payload = match (cache_ttl, canonical, tool.domain(), dealership, write) {
            (_, _, _, _, Some(write)) => self.write_once(write, work).await?,
            (Some(ttl), Some(canonical), Some(domain), Some(d), None) => {
                // A mirrored inventory's answers hold until its copy changes.
                let canonical = match self.services().mirror.cache_tag(&d.profile.id) {
                    Some(tag) if domain == Domain::Inventory => format!("{canonical}\u{1f}{tag}"),
                    _ => canonical,
                };
                let key = self
                    .inner
                    .cache
                    .key(&d.profile.id, domain, tool.name(), &canonical);
                let (payload, info) = self.inner.cache.get_or_compute(key, ttl, work).await?;
                if let Some(info) = info {
                    let result = if info.hit { "hit" } else { "miss" };
                    self.metrics()
                        .cache
                        .get_or_create(&CacheLabels {
                            tool: tool.name(),
                            result,
                        })
                        .inc();
                }
                facts.cache = info;
                if let Some(info) = info.filter(|i| i.hit) {
                    client_log::tell(|| notices::cache_hit(info.age));
                }
                // Checked only for a caller that listens: inventory reads are the hot path.
                if domain == Domain::Inventory
                    && client_log::listening()
                    && let Some(at) = self.services().mirror.stale_since(&d.profile.id)
                {
                    client_log::tell(|| notices::stale_copy(&d.profile.id, at));
                }
                payload
            }
            _ => work.await?,
        };
        self.check_size(&payload)?;
        Ok(payload)
    }

    /// The handler under the call deadline, its upstream failures mapped to
    /// what the caller sees (the one mapping for every tool).
    async fn handle(
        &self,
        ctx: ToolContext<'_>,
        args: Box<dyn AnyArgs>,
        deadline: tokio::time::Instant,
    ) -> Result<Payload, ToolError> {
        let dealership = ctx.dealership.map(|d| d.profile.id.as_str());
        let principal = &ctx.principal.name;
        // Boxed by the table: tool futures differ wildly in size, and the largest would size them all.
        match tokio::time::timeout_at(deadline, (ctx.tool.spec().handle)(ctx, args)).await {
            Ok(Ok(payload)) => Ok(payload),
            Ok(Err(HandlerError::Refused(e))) => Err(e),
            Ok(Err(HandlerError::Upstream(e))) => {
                // The detail (status, vendor code) goes to the operator's log, never to the caller.
                tracing::warn!(error = %e, dealership, principal = %principal, "Upstream call failed.");
                Err(e.to_caller())
            }
            Err(_) => Err(ToolError::past_deadline()),
        }
    }

    /// Access: dealership scoping, the tool's scope, the route; and the cache
    /// TTL when the result may be cached.
    fn admit<'a>(
        &'a self,
        tool: ToolId,
        principal: &Principal,
        parsed: &dyn AnyArgs,
        facts: &mut Facts,
    ) -> Result<(Option<&'a Dealership>, Option<std::time::Duration>), ToolError> {
        let dealership = match parsed.dealership_id() {
            Some(id) => Some(self.authorize(principal, id, tool)?),
            None => None,
        };
        if tool.spec().signed_in && principal.anonymous {
            return Err(ToolError::new(
                ErrorCode::AuthUnauthorized,
                "This tool needs an access token.",
            )
            .with_hint("Send an Authorization: Bearer token that grants this dealership."));
        }
        if let Some(scope) = tool.scope()
            && !principal.has_scope(scope)
        {
            return Err(ToolError::new(
                ErrorCode::AuthForbidden,
                "Your token does not carry the scope this tool needs.",
            )
            .with_details(json!({ "required_scope": scope.as_str() })));
        }
        let mut cache_ttl = None;
        if let (Some(domain), Some(d)) = (tool.domain(), dealership) {
            let route = d.routes.get(&domain).ok_or_else(|| unsupported(domain))?;
            facts.adapter = Some(route.upstream.clone());
            if tool.cacheable() {
                cache_ttl = Some(self.inner.cache.ttl(domain));
            }
        }
        Ok((dealership, cache_ttl))
    }

    /// The last guard on what reaches the model: list tools fit their pages
    /// to the token budget themselves, so this refuses only a single record
    /// (or a page of one) too large to send.
    fn check_size(&self, payload: &crate::contract::Payload) -> Result<(), ToolError> {
        let limits = self.limits();
        let (size, max) = (payload.text().len(), limits.max_result_bytes);
        let (tokens, max_tokens) = (payload.estimated_tokens(), limits.max_result_tokens);
        if size <= max && tokens <= max_tokens {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorCode::RequestResultTooLarge,
            "The result is larger than the bridge returns at once.",
        )
        .with_details(json!({
            "max_bytes": max,
            "size_bytes": size,
            "max_tokens": max_tokens,
            "estimated_tokens": tokens,
        }))
        .with_hint(
            "Ask for fewer items (a lower limit) or narrow the filters, and page with the cursor.",
        ))
    }

    /// Scoping: the caller may use this dealership. Unknown and forbidden look
    /// the same, so a token cannot probe which dealerships exist.
    fn authorize<'a>(
        &'a self,
        principal: &Principal,
        id: &str,
        tool: ToolId,
    ) -> Result<&'a Dealership, ToolError> {
        let dealership = self.dealership(id).filter(|_| principal.may_use(id));
        match dealership {
            Some(d) if !principal.anonymous || tool.domain().is_none() || d.anonymous_inventory => {
                Ok(d)
            }
            _ if principal.anonymous => Err(ToolError::new(
                ErrorCode::AuthUnauthorized,
                "This dealership needs an access token for that.",
            )
            .with_hint("Send an Authorization: Bearer token that grants this dealership.")),
            _ => Err(ToolError::new(
                ErrorCode::AuthForbidden,
                "Your token does not grant access to that dealership.",
            )
            .with_next_tool_call(
                "dealership_list",
                json!({}),
                "List the dealerships your token may use.",
            )),
        }
    }
}

/// The arguments without the top-level fields `problems` name: what is left
/// to check semantically when the whole does not parse.
fn without_fields(args: &Value, problems: &Problems) -> Value {
    let mut rest = args.clone();
    if let Value::Object(map) = &mut rest {
        for field in problems.fields() {
            let field = field.replace("~1", "/").replace("~0", "~");
            map.remove(&field);
        }
    }
    rest
}

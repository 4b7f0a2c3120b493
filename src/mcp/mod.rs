//! The MCP face of the gateway: an rmcp `ServerHandler` written by hand, because
//! the tools a caller sees depend on its token, and two transports.

mod completions;
mod logging;
mod progress;
mod prompts;
mod resources;
mod splice;
pub mod stdio;
pub mod subscriptions;
mod tasks;

pub use splice::splice_answers;

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CompleteRequestParams, CompleteResult, ContentBlock, CreateTaskResult, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::model::{
    InitializeRequestParams, InitializeResult, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::contract::{Principal, Scope};
use crate::gateway::cache::CacheInfo;
use crate::gateway::{Answer, CallError, CallOutcome, Caller, Gateway};
use crate::store::subscriptions as store_subscriptions;
use crate::telemetry::door::Door;
use crate::telemetry::trace::TraceContext;
use crate::tools::{TOOLSET_VERSION, ToolId};
use splice::SpliceSlot;

const INSTRUCTIONS: &str = "dms-bridge gives one canonical tool surface over car dealerships' systems. \
Start with dealership_list to learn the dealership_id values you may use; every other tool is scoped to one dealership. \
Money is {amount, currency} in minor units (cents); mileage is {value, unit}; timestamps are RFC 3339 with offset. \
Errors come back as tool results with isError and a stable error.code; error.retryable says whether the same call may succeed later, \
and error.recovery.next_tool_call suggests what to call instead.";

/// How long a 2026-07-28 client may keep a list that only a new config
/// changes (`ttlMs`). Read results keep rmcp's default of 0 (not cacheable):
/// inventory and orders change under them.
const CONFIG_BOUND_TTL_MS: u64 = 5 * 60 * 1000;

/// The caller as the HTTP server resolved it, handed to the
/// MCP handler in the request's extensions.
#[derive(Debug, Clone)]
pub struct HttpCaller {
    pub principal: Arc<Principal>,
    /// Signed in with an OAuth access token (not a static token, not anonymous).
    pub signed_in: bool,
    pub client_ip: Option<IpAddr>,
    /// From the `traceparent` header, if valid.
    pub trace: Option<TraceContext>,
}

/// The protocol revisions an MCP handler behind [`McpEndpoint`] should
/// serve: both eras from the same handlers, 2026-07-28 clients discovering
/// and sending per-request metadata, older ones initializing.
pub fn served_protocol_versions() -> Cow<'static, [ProtocolVersion]> {
    Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
}

/// One MCP server instance; per HTTP request in stateless mode, per session
/// in stateful mode, per process on stdio.
#[derive(Clone)]
pub struct McpServer {
    gateway: Gateway,
    /// On stdio the caller is fixed at start-up (token from the environment).
    fixed_principal: Option<Arc<Principal>>,
    /// The session's `resources/subscribe` set, where there is a session
    /// (stdio, stateful HTTP); `None` serves every request on its own.
    session: Option<Arc<subscriptions::SessionSubscriptions>>,
    /// `logging/setLevel`'s level, for as long as this instance serves.
    log_level: Arc<logging::SessionLevel>,
    /// Fired at shutdown: long-lived listen streams end.
    streams_end: tokio_util::sync::CancellationToken,
}

impl McpServer {
    /// On stdio (`fixed_principal` set) the process is the session.
    pub fn new(gateway: Gateway, fixed_principal: Option<Arc<Principal>>) -> Self {
        let session = fixed_principal.is_some().then(Default::default);
        Self {
            gateway,
            fixed_principal,
            session,
            log_level: Arc::default(),
            streams_end: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Whether this instance serves one session (stateful HTTP).
    pub fn with_sessions(mut self, sessions: bool) -> Self {
        if sessions {
            self.session.get_or_insert_with(Default::default);
        }
        self
    }

    /// Ends `subscriptions/listen` streams when `end` fires (shutdown), which
    /// would otherwise hold the server's drain open.
    pub fn with_streams_end(mut self, end: tokio_util::sync::CancellationToken) -> Self {
        self.streams_end = end;
        self
    }

    /// The caller: fixed on stdio, or put in the request by the HTTP auth layer.
    fn principal(&self, ctx: &RequestContext<RoleServer>) -> Result<Arc<Principal>, McpError> {
        self.caller(ctx).map(|c| c.principal)
    }

    /// The caller and its trace: `_meta.traceparent` wins over the HTTP header.
    fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<Caller, McpError> {
        // rmcp moves the request's `_meta` into the context (the params' own `meta` stays empty).
        let from_meta = ctx
            .meta
            .get_traceparent()
            .and_then(TraceContext::from_traceparent);
        if let Some(principal) = &self.fixed_principal {
            return Ok(Caller {
                principal: principal.clone(),
                client_ip: None,
                trace: from_meta.unwrap_or_else(TraceContext::generate),
                door: Door::Mcp,
                progress: progress::sink(ctx),
                log: None,
            });
        }
        let http = ctx
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<HttpCaller>().cloned())
            .ok_or_else(|| McpError::invalid_request("no authenticated caller", None))?;
        let trace = from_meta
            .or(http.trace)
            .unwrap_or_else(TraceContext::generate);
        Ok(Caller {
            principal: http.principal,
            client_ip: http.client_ip,
            trace,
            door: Door::Mcp,
            progress: progress::sink(ctx),
            log: None,
        })
    }

    /// The caller, with log messages going to the client when it asked for
    /// them; flush the notifier before answering (see `logging`).
    fn logged_caller(
        &self,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<(Caller, Option<Arc<logging::Notifier>>), McpError> {
        let mut caller = self.caller(ctx)?;
        let notifier = logging::sink(ctx, &self.log_level);
        caller.log = notifier
            .clone()
            .map(|n| n as Arc<dyn crate::telemetry::client_log::LogSink>);
        Ok((caller, notifier))
    }
}

/// Lets the call's log messages go out before its answer.
async fn flushed<T>(answer: T, notifier: Option<Arc<logging::Notifier>>) -> T {
    if let Some(notifier) = notifier {
        notifier.flush().await;
    }
    answer
}

/// What `initialize` advertises beyond tools: the toolset version, and the
/// AutomotiveMCP profile served. Everything is derived from the tool table, so
/// it cannot drift from what `tools/list` serves: each domain (the prefix of
/// its tools' names) at Level 2 (tools, and Level 1 resources where they
/// exist), and every scope a tool needs plus the staff scopes.
pub fn experimental_capabilities() -> std::collections::BTreeMap<String, JsonObject> {
    let domains: JsonObject = ToolId::ALL
        .iter()
        .filter_map(|t| t.name().split_once('.'))
        .filter(|(domain, _)| *domain != "events")
        .map(|(domain, _)| (domain.to_owned(), json!({ "level": level_of(domain) })))
        .collect();
    let entries = [
        (
            "dms_bridge",
            json!({ "toolset_version": TOOLSET_VERSION, "tools": ToolId::ALL.map(|t| t.name()) }),
        ),
        (
            "automotive_mcp",
            json!({ "spec_version": "0.1", "domains": domains, "scopes": advertised_scopes() }),
        ),
    ];
    entries
        .into_iter()
        .filter_map(|(k, v)| match v {
            Value::Object(map) => Some((k.to_owned(), map)),
            _ => None,
        })
        .collect()
}

/// The AutomotiveMCP level a domain fully meets. Level 3 (eventing): every
/// change to the domain's resources is an event (`events.list`, resource
/// subscriptions): inventory (the mirror's `vehicle.*` events) and leads
/// (`lead.*`). Service stays at 2 until repair-order changes are events too.
fn level_of(domain: &str) -> u8 {
    match domain {
        "inventory" | "leads" => 3,
        _ => 2,
    }
}

/// Every scope some tool needs, and the staff scope of each domain whose
/// records have owners; sorted, once each.
pub fn advertised_scopes() -> Vec<&'static str> {
    let scopes: std::collections::BTreeSet<Scope> = ToolId::ALL
        .iter()
        .flat_map(|t| [t.scope(), t.staff_scope()])
        .flatten()
        .collect();
    scopes.into_iter().map(Scope::as_str).collect()
}

/// What `initialize` answers. Built once: in stateless HTTP mode rmcp asks
/// for it on every request, and building it (capabilities, JSON maps) showed
/// as 2 % of a cached search's CPU. Two of them: with and without the Tasks
/// extension (`[tasks] enabled`).
static SERVER_INFO: std::sync::LazyLock<[ServerConfig; 2]> =
    std::sync::LazyLock::new(|| [server_info(false), server_info(true)]);

// `enable_logging`: rmcp marks MCP logging deprecated (SEP-2577); both
// revisions served still have it.
#[allow(deprecated)]
fn server_info(tasks: bool) -> ServerConfig {
    // Subscriptions work for 2026-07-28 clients on every transport
    // (`subscriptions/listen`); `initialize` withdraws them where there is no session.
    let builder = ServerCapabilities::builder()
        .enable_completions()
        .enable_logging()
        .enable_prompts()
        .enable_tools()
        .enable_resources()
        .enable_resources_subscribe()
        .enable_experimental_with(experimental_capabilities());
    let capabilities = if tasks {
        builder.enable_tasks().build()
    } else {
        builder.build()
    };
    ServerConfig::new(capabilities)
        .with_server_info(
            Implementation::new("dms-bridge", env!("CARGO_PKG_VERSION")).with_title("dms-bridge"),
        )
        .with_instructions(INSTRUCTIONS)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        SERVER_INFO[usize::from(self.gateway.tasks_enabled())].clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        ctx.peer.set_peer_info(request.clone());
        // `resources/subscribe` is offered on every transport: without a
        // session, updates go to the principal's `GET` stream.
        self.negotiate_initialize(&request)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(subscriptions::accepted(requested))
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        let principal = self.principal(subscription.request_context())?;
        tokio::select! {
            ended = subscriptions::listen(&self.gateway, principal, subscription) => ended,
            () = self.streams_end.cancelled() => Ok(()),
        }
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !subscriptions::subscribable(&request.uri) {
            return Err(not_subscribable());
        }
        let principal = self.principal(&ctx)?;
        let Some(session) = &self.session else {
            return self.subscribe_statelessly(&principal, &request.uri).await;
        };
        session.subscribe(request.uri, &self.gateway, principal, ctx.peer.clone());
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        match &self.session {
            Some(session) => session.unsubscribe(&request.uri),
            None => {
                let principal = self.principal(&ctx)?;
                store_subscriptions::remove(self.gateway.store(), &principal.name, &request.uri)
                    .await
                    .map_err(|e| stored_subscriptions_failed(&e))?;
            }
        }
        Ok(())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // Both eras from the same handlers: 2026-07-28 clients discover and
        // send per-request metadata; older ones initialize.
        served_protocol_versions()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let principal = self.principal(&ctx)?;
        let mut result = ListToolsResult::with_all_items(self.gateway.visible_tools(&principal));
        // What a caller sees depends on its token, and changes only with the config.
        result.ttl_ms = Some(CONFIG_BOUND_TTL_MS);
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let principal = self.principal(&ctx)?;
        let mut result =
            ListResourcesResult::with_all_items(resources::list(&self.gateway, &principal));
        // The caller's dealerships: per token, changing only with the config.
        result.ttl_ms = Some(CONFIG_BOUND_TTL_MS);
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let mut result = ListResourceTemplatesResult::with_all_items(resources::templates());
        // The same for every caller, fixed in the build.
        result.ttl_ms = Some(CONFIG_BOUND_TTL_MS);
        result.cache_scope = Some(CacheScope::Public);
        Ok(result)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let principal = self.principal(&ctx)?;
        let mut result =
            ListPromptsResult::with_all_items(prompts::list(&self.gateway, &principal));
        // Like tools/list: per token, changing only with the config.
        result.ttl_ms = Some(CONFIG_BOUND_TTL_MS);
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let principal = self.principal(&ctx)?;
        prompts::get(
            &self.gateway,
            &principal,
            &request.name,
            request.arguments.as_ref(),
        )
        .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let caller = self.caller(&ctx)?;
        Ok(completions::complete(&self.gateway, &caller, &request).await)
    }

    /// Lasts as long as this instance: see `logging`.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.principal(&ctx)?;
        self.log_level.set(request.level);
        Ok(())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let (caller, notifier) = self.logged_caller(&ctx)?;
        let answer = resources::read(&self.gateway, &caller, &request.uri)
            .await
            .map(Into::into);
        flushed(answer, notifier).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.gateway.tool_definition(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (caller, notifier) = self.logged_caller(&ctx)?;
        // `return` in here answers the call; its log messages go out first.
        let answer = async {
            // Only a client that declared the Tasks extension on this request may get a task.
            let takes_tasks = self.gateway.may_become_task(&caller, &request.name)
                && ctx
                    .client_capabilities()
                    .is_some_and(|caps| caps.supports_tasks());
            if takes_tasks {
                return match self
                    .gateway
                    .call_or_defer(caller, &request.name, request.arguments)
                    .await
                {
                    Ok(Answer::Now(outcome)) => Ok(result_of(outcome, None).into()),
                    Ok(Answer::Task(view)) => {
                        Ok(CreateTaskResult::new(tasks::task_of(&view)).into())
                    }
                    Err(CallError::UnknownTool) => Err(unknown_tool(&request.name)),
                };
            }
            // Only an answer that stays one JSON body can take the result's bytes as
            // they are: no progress or log notification may turn it into a stream.
            let splice = (caller.progress.is_none() && caller.log.is_none())
                .then(|| splice_slot(&ctx))
                .flatten();
            match self
                .gateway
                .call_tool(&caller, &request.name, request.arguments)
                .await
            {
                Ok(outcome) => Ok(result_of(outcome, splice).into()),
                Err(CallError::UnknownTool) => Err(unknown_tool(&request.name)),
            }
        }
        .await;
        flushed(answer, notifier).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let principal = self.principal(&ctx)?;
        let view = self
            .gateway
            .task(&principal, &request.task_id)
            .await
            .map_err(tasks::task_error)?;
        Ok(GetTaskResult::new(tasks::detailed(&view)))
    }

    /// The bridge's tasks never ask the client for input, so there is never
    /// an outstanding request to answer: responses are ignored, as the
    /// extension asks for keys that are not outstanding.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let principal = self.principal(&ctx)?;
        self.gateway
            .task(&principal, &request.task_id)
            .await
            .map(drop)
            .map_err(tasks::task_error)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let principal = self.principal(&ctx)?;
        self.gateway
            .cancel_task(&principal, &request.task_id)
            .await
            .map_err(tasks::task_error)
    }
}

impl McpServer {
    /// `resources/subscribe` over stateless HTTP: kept in the store for the
    /// principal, told on its `GET` stream (on whichever replica holds it).
    async fn subscribe_statelessly(
        &self,
        principal: &Principal,
        uri: &str,
    ) -> Result<(), McpError> {
        if principal.anonymous {
            return Err(McpError::invalid_request(
                "Subscribing needs an access token (Authorization: Bearer).",
                None,
            ));
        }
        let subscription = subscriptions::stored_subscription(&self.gateway, principal, uri)
            .await
            .ok_or_else(not_subscribable)?;
        store_subscriptions::add(
            self.gateway.store(),
            &principal.name,
            &subscription,
            chrono::Utc::now(),
        )
        .await
        .map_err(|e| stored_subscriptions_failed(&e))
    }
}

fn not_subscribable() -> McpError {
    McpError::invalid_params(
        "Only a dealership's events (dms://dealerships/{id}/events) and its vehicles, leads, appointments and repair orders can be subscribed to, at a dealership your token may use.",
        None,
    )
}

fn stored_subscriptions_failed(e: &crate::store::StoreError) -> McpError {
    tracing::error!(error = %e, "Could not keep a resource subscription.");
    McpError::internal_error(
        "The bridge hit an unexpected error. It has been logged; try again later.",
        None,
    )
}

fn unknown_tool(name: &str) -> McpError {
    McpError::invalid_params(
        format!("Unknown tool: {name}"),
        Some(json!({ "error": { "code": "request.unknown_tool", "retryable": false } })),
    )
}

/// The HTTP layer's slot for this request's result bytes, if any.
fn splice_slot(ctx: &RequestContext<RoleServer>) -> Option<SpliceSlot> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<SpliceSlot>().cloned())
}

/// The MCP result: structured content, plus `_meta` saying how fresh it is.
/// With a splice slot, the result's own bytes go on the wire (see `splice`).
fn result_of(outcome: CallOutcome, splice: Option<SpliceSlot>) -> CallToolResult {
    let result = match outcome.result {
        Ok(payload) => {
            let (structured, text) = match splice {
                Some(slot) => slot.hold(payload),
                None => (payload.value().clone(), payload.text().to_owned()),
            };
            success(structured, text)
        }
        Err(error) => failure(error.to_json()),
    };
    with_meta(result, &outcome.trace_id, outcome.cache)
}

/// A task's stored answer as the result the call would have given inline.
fn stored_result(ok: bool, body: Value, trace_id: String) -> CallToolResult {
    let result = if ok {
        let text = body.to_string();
        success(body, text)
    } else {
        failure(body)
    };
    with_meta(result, &trace_id, None)
}

fn success(structured: Value, text: String) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

/// A tool error travels as `isError: true` with the error envelope as JSON in
/// one text block and no `structuredContent`: clients (the TypeScript SDK, the
/// Inspector) check any `structuredContent` against the tool's output schema,
/// error or not, and the envelope is not the tool's output (TOOLSET.md "Errors").
fn failure(envelope: Value) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(envelope.to_string())])
}

fn with_meta(result: CallToolResult, trace_id: &str, cache: Option<CacheInfo>) -> CallToolResult {
    let mut meta = JsonObject::new();
    meta.insert("io.dms-bridge/trace_id".into(), json!(trace_id));
    if let Some(cache) = cache {
        meta.insert(
            "io.dms-bridge/cache".into(),
            json!({
                "hit": cache.hit,
                "stored_at": cache.stored_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                "age_ms": cache.age.as_millis() as u64,
            }),
        );
    }
    result.with_meta(Some(MetaObject(meta)))
}

//! The handler: routes each request to the fixture that serves it.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use dms_bridge::mcp::served_protocol_versions;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    DiscoverResult, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::json;

use crate::resources::TTL_MS;
use crate::rounds::{self, Reply, Retry};
use crate::seal::Sealer;
use crate::{flows, prompts, resources, tools};

/// One per session (2025-11-25) or per request (2026-07-28).
#[derive(Clone)]
pub struct Fixture {
    sealer: Sealer,
    /// The session's `logging/setLevel`, as a rank (0: never set).
    log_level: Arc<AtomicU8>,
}

impl Fixture {
    pub fn new(sealer: Sealer) -> Self {
        Self {
            sealer,
            log_level: Arc::new(AtomicU8::new(0)),
        }
    }

    /// Sends a log message if the client asked for this level: by
    /// `logging/setLevel` in a session (every level until it does), by
    /// `_meta` `logLevel` on a 2026-07-28 request (nothing without it).
    pub async fn log(&self, ctx: &RequestContext<RoleServer>, level: LoggingLevel, message: &str) {
        let threshold = if rounds::stateless_era(ctx) {
            ctx.meta.log_level().map(rank)
        } else {
            Some(self.log_level.load(Ordering::Relaxed))
        };
        if threshold.is_none_or(|t| rank(level) < t) {
            return;
        }
        let param =
            LoggingMessageNotificationParam::new(level, json!(message)).with_logger("conformance");
        if let Err(e) = ctx.peer.notify_logging_message(param).await {
            tracing::debug!(error = %e, "Could not send a log message.");
        }
    }
}

/// Severity order, from 1 (debug) up.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 1,
        LoggingLevel::Info => 2,
        LoggingLevel::Notice => 3,
        LoggingLevel::Warning => 4,
        LoggingLevel::Error => 5,
        LoggingLevel::Critical => 6,
        LoggingLevel::Alert => 7,
        LoggingLevel::Emergency => 8,
    }
}

static SERVER_INFO: std::sync::LazyLock<ServerConfig> = std::sync::LazyLock::new(|| {
    let capabilities = ServerCapabilities::builder()
        .enable_completions()
        .enable_logging()
        .enable_prompts()
        .enable_resources()
        .enable_resources_subscribe()
        .enable_tools()
        .build();
    ServerConfig::new(capabilities)
        .with_server_info(Implementation::new(
            "dms-bridge-conformance-fixtures",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions("The MCP conformance suite's fixtures, on dms-bridge's HTTP layer.")
});

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        SERVER_INFO.clone()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        served_protocol_versions()
    }

    async fn discover(&self, _ctx: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        let mut info = self.get_info();
        // 2026-07-28 has no resources/subscribe; its successor,
        // subscriptions/listen, is not served here.
        if let Some(resources) = info.capabilities.resources.as_mut() {
            resources.subscribe = None;
        }
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut result = ListToolsResult::with_all_items(tools::list());
        result.ttl_ms = Some(TTL_MS);
        result.cache_scope = Some(CacheScope::Public);
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::find(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(flow) = flows::tool(&request.name) else {
            return tools::call(self, &request.name, &ctx).await.map(Into::into);
        };
        let retry = Retry {
            answers: request.input_responses,
            state: request.request_state,
        };
        let args = request.arguments.unwrap_or_default();
        match rounds::drive(&request.name, flow, args, retry, &ctx, &self.sealer).await? {
            Reply::Complete(result) => Ok(result.into()),
            Reply::InputRequired(result) => Ok(result.into()),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let mut result = ListResourcesResult::with_all_items(resources::list());
        result.ttl_ms = Some(TTL_MS);
        result.cache_scope = Some(CacheScope::Public);
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let mut result = ListResourceTemplatesResult::with_all_items(resources::templates());
        result.ttl_ms = Some(TTL_MS);
        result.cache_scope = Some(CacheScope::Public);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(&request.uri).map(Into::into)
    }

    /// Accepted and forgotten: the fixtures never change.
    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let mut result = ListPromptsResult::with_all_items(prompts::list());
        result.ttl_ms = Some(TTL_MS);
        result.cache_scope = Some(CacheScope::Public);
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let Some(flow) = prompts::flow(&request.name) else {
            return prompts::get(&request.name, &args).map(Into::into);
        };
        let retry = Retry {
            answers: request.input_responses,
            state: request.request_state,
        };
        match rounds::drive(&request.name, flow, args, retry, &ctx, &self.sealer).await? {
            Reply::Complete(result) => Ok(result.into()),
            Reply::InputRequired(result) => Ok(result.into()),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        prompts::complete(&request)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log_level.store(rank(request.level), Ordering::Relaxed);
        Ok(())
    }
}

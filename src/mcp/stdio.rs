//! MCP over stdin/stdout for desktop clients. The caller's token comes from the
//! environment; stdout carries only MCP messages (logs go to stderr).

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::stdio;

use super::McpServer;
use crate::contract::Principal;
use crate::gateway::Gateway;

/// Serves until the client closes stdin.
pub async fn serve(gateway: Gateway, principal: Arc<Principal>) -> anyhow::Result<()> {
    let server = McpServer::new(gateway, Some(principal))
        .serve(stdio())
        .await?;
    server.waiting().await?;
    Ok(())
}

//! A deployment, reached from outside as an agent's host reaches it: the MCP
//! client of rmcp (not the bridge's own code) over Streamable HTTP, in
//! either protocol era, with the deployment's token.

use std::collections::BTreeMap;
use std::future::Future;

use rmcp::model::{CallToolRequestParams, ProtocolVersion, ServerPeerInfo, Tool};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::kit::bridge::{Answer, Calls};

/// Which lifecycle the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` and a session (2025-06-18 and 2025-11-25).
    Sessions,
    /// `server/discover` and per-request metadata (2026-07-28).
    Stateless,
}

pub struct Remote {
    client: RunningService<RoleClient, ()>,
    /// Canonical (dotted) tool name → the name the deployment serves it as.
    served: BTreeMap<String, String>,
    pub tools: Vec<Tool>,
}

impl Remote {
    pub async fn connect(url: &str, token: Option<&str>, era: Era) -> Result<Self, String> {
        crate::net::install_tls_provider();
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(token) = token {
            config = config.auth_header(token.to_owned());
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let client = match era {
            Era::Sessions => ().serve(transport).await,
            Era::Stateless => {
                ().serve_with_lifecycle(
                    transport,
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
            }
        }
        .map_err(|e| e.to_string())?;
        let tools = client.list_all_tools().await.map_err(|e| e.to_string())?;
        let served = tools
            .iter()
            .map(|t| (canonical_name(&t.name), t.name.to_string()))
            .collect();
        Ok(Self {
            client,
            served,
            tools,
        })
    }

    pub fn server(&self) -> Option<std::sync::Arc<ServerPeerInfo>> {
        self.client.peer_info()
    }

    /// Whether the deployment serves the canonical tool `name` (dotted).
    pub fn serves(&self, name: &str) -> bool {
        self.served.contains_key(name)
    }

    pub async fn close(self) {
        let _ = self.client.cancel().await;
    }

    async fn call_tool(&self, tool: &str, arguments: Value) -> Answer {
        let name = self
            .served
            .get(tool)
            .cloned()
            .unwrap_or_else(|| tool.to_owned());
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let request = CallToolRequestParams::new(name).with_arguments(arguments);
        match self.client.call_tool(request).await {
            Ok(result) if result.is_error == Some(true) => {
                // The error envelope travels as JSON in the one text block.
                let text = result
                    .content
                    .iter()
                    .find_map(|c| c.as_text().map(|t| t.text.clone()))
                    .unwrap_or_default();
                Answer::Error(serde_json::from_str(&text).unwrap_or_else(
                    |_| json!({ "error": { "code": "conform.unreadable_error", "text": text } }),
                ))
            }
            Ok(result) => Answer::Ok(result.structured_content.unwrap_or(Value::Null)),
            Err(e) => Answer::Error(json!({ "error": { "code": "conform.protocol_error",
                                                       "message": e.to_string() } })),
        }
    }
}

impl Calls for Remote {
    fn call(&self, tool: &str, arguments: Value) -> impl Future<Output = Answer> + Send {
        self.call_tool(tool, arguments)
    }
}

/// `inventory_search` → `inventory.search`: host-safe names replace the
/// first dot with an underscore (domains have no underscore).
fn canonical_name(served: &str) -> String {
    if served.contains('.') {
        return served.to_owned();
    }
    served.replacen('_', ".", 1)
}

#[cfg(test)]
mod tests {
    use super::canonical_name;

    #[test]
    fn host_safe_names_read_back_as_canonical() {
        assert_eq!(canonical_name("inventory_search"), "inventory.search");
        assert_eq!(
            canonical_name("service_list_repair_orders"),
            "service.list_repair_orders"
        );
        assert_eq!(canonical_name("leads.create"), "leads.create");
    }
}

//! What the in-process examples share: the bridge built from a config and
//! served by the production accept loop on a loopback port, and one tool
//! call's structured answer.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use dms_bridge::config::from_toml_str;
use dms_bridge::http::serve::{self, ServeSettings};
use dms_bridge::http::{HttpSettings, router};
use dms_bridge::runtime;
use rmcp::model::CallToolRequestParams;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The bridge of `toml` (its store switched to `store`, if given), served
/// until the example exits; its base URL (`http://127.0.0.1:PORT`) and MCP path.
pub async fn start_bridge(toml: &str, store: Option<&str>) -> (String, String) {
    let mut config = from_toml_str(toml).unwrap();
    if let Some(url) = store {
        config.store.url = url.to_owned();
    }
    let runtime = runtime::build(&config, std::path::Path::new(".")).unwrap();
    let started = runtime.start(&CancellationToken::new()).await.unwrap();
    let settings = HttpSettings::for_config(&config);
    let app = router(
        started.gateway.clone(),
        started.standing.clone(),
        &settings,
        CancellationToken::new(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serve_settings = ServeSettings::from_config(&config.server);
    tokio::spawn(async move {
        serve::serve(listener, app, &serve_settings, std::future::pending()).await
    });
    (format!("http://{addr}"), config.server.path)
}

/// A CRM intake served by `app` on a loopback port; its ADF URL.
pub async fn crm(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/adf")
}

/// The examples' dealership `bench`, its CRM at `crm` and the token
/// `bench-token` (leads write and read), as config TOML.
pub fn bench_dealership(crm: &str) -> String {
    format!(
        r#"[[dealerships]]
id = "bench"
name = "Bench Motors"
timezone = "America/Chicago"
address = {{ line1 = "1 Main St", city = "Austin", region = "TX", postal_code = "78701", country = "US" }}
routes = {{ leads = "crm" }}

[upstreams.crm]
kind = "adf_http"
url = "{crm}"
timeout = "5s"

[[tokens]]
name = "bench"
secret = {{ value = "bench-token" }}
dealerships = ["bench"]
scopes = ["amcp:leads:write", "amcp:leads:read"]
"#
    )
}

/// `tool` called with `args` (an object); its structured answer, or a panic
/// with the error's text.
pub async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &str,
    args: Value,
) -> Value {
    let Value::Object(map) = args else {
        panic!("{tool}: arguments are an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(map))
        .await
        .unwrap();
    match result.structured_content {
        Some(content) => content,
        None => panic!("{tool}: {:?}", result.content),
    }
}

-- wrk script: one MCP tools/call per request (stateless Streamable HTTP, JSON answers).
-- Environment: TOKEN (bearer), TOOL, ARGS (JSON object). Prints one JSON line at the end.
local token = os.getenv("TOKEN") or "demo-token-group"
local tool = os.getenv("TOOL") or "inventory.search"
local args = os.getenv("ARGS") or '{"dealership_id":"demo-cdk","limit":20}'

wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool .. '","arguments":' .. args .. '}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
wrk.headers["Authorization"] = "Bearer " .. token

done = require("report").done

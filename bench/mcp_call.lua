-- wrk script: one MCP tools/call per request (stateless Streamable HTTP, JSON answers).
-- Environment: TOKEN (bearer), TOOL, ARGS (JSON object). Prints one JSON line at the end.
-- VARY_LIMIT=1: ARGS holds a %d where the limit goes, and each request asks for
-- 1..32 in turn, so concurrent calls are not identical and share no result.
local token = os.getenv("TOKEN") or "demo-token-group"
local tool = os.getenv("TOOL") or "inventory_search"
local args = os.getenv("ARGS") or '{"dealership_id":"demo-cdk","limit":20}'

wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool .. '","arguments":' .. args .. '}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
wrk.headers["Authorization"] = "Bearer " .. token

if os.getenv("VARY_LIMIT") then
  local template = wrk.body
  local n = 0
  request = function()
    n = n + 1
    return wrk.format(nil, nil, nil, string.format(template, (n % 32) + 1))
  end
end

done = require("report").done

-- wrk script: one MCP tools/call leads.create per request, each with a distinct
-- customer e-mail (run id, thread id, counter), so none falls in the duplicate window.
-- An answer without "status":"received" counts as an error ("bad_answers"; a
-- non-2xx answer is counted once, under non_2xx). Environment: TOKEN, RUN (unique per wrk run).
local report = require("report")
local token = os.getenv("TOKEN") or "demo-token-cdk"
local run = os.getenv("RUN") or tostring(os.time())

local threads = {}
local next_id = 0
function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

local prefix = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"leads_create","arguments":'
  .. '{"dealership_id":"demo-cdk","customer":{"first_name":"Dana","last_name":"Whitfield","email":"dana-'
local suffix = '@example.com","phone":"+15125550188","preferred_contact":"email"},'
  .. '"consent":{"granted_at":"2026-01-01T00:00:00Z","allowed_channels":["email","sms"],'
  .. '"consent_text":"I agree to be contacted about my request.","scope":["lead_submission"]},'
  .. '"vehicle_of_interest":{"year":2021,"make":"Honda","model":"Civic","condition":"used"},'
  .. '"message":"Is it still available?","source_agent":"bench"}}}'
local headers = {
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/json, text/event-stream",
  ["MCP-Protocol-Version"] = "2025-06-18",
  ["Authorization"] = "Bearer " .. token,
}

function init(args)
  counter = 0
  received = 0
  bad = 0
  first_bad = nil
end

function request()
  counter = counter + 1
  local body = prefix .. run .. "-" .. id .. "-" .. counter .. suffix
  return wrk.format("POST", nil, headers, body)
end

function response(status, headers, body)
  if status < 300 and body:find('"status":"received"', 1, true) then
    received = received + 1
  elseif status < 300 then
    bad = bad + 1
    first_bad = first_bad or body:sub(1, 300)
  end
end

function done(summary, latency, requests)
  local received_total, bad_total = 0, 0
  for _, t in ipairs(threads) do
    received_total = received_total + t:get("received")
    bad_total = bad_total + t:get("bad")
    local sample = t:get("first_bad")
    if sample then io.stderr:write("leads.lua: unexpected answer: " .. sample .. "\n") end
  end
  report.done(summary, latency, requests,
    { errors = bad_total, fields = { { "received", received_total }, { "bad_answers", bad_total } } })
end

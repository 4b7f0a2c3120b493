-- wrk script: one AAP v1.3 request per HTTP request (A2A v1.0 JSON-RPC
-- SendMessage to /aap/<dealership>). Environment: TOKEN (bearer), DATA (the
-- AAP request, a JSON object with its "type"), MEDIA (the request media-type
-- stem, e.g. inventory-search). Prints one JSON line at the end.
local token = os.getenv("TOKEN") or "demo-token-group"
local data = os.getenv("DATA") or '{"type":"inventory.search.request","pagination":{"limit":20}}'
local media = os.getenv("MEDIA") or "inventory-search"

wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"bench",'
  .. '"role":"ROLE_USER","parts":[{"data":' .. data .. ',"mediaType":"application/vnd.autoagent.'
  .. media .. '-request+json"}]},"configuration":{"acceptedOutputModes":["application/vnd.autoagent.'
  .. media .. '-response+json"]}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
wrk.headers["Authorization"] = "Bearer " .. token

done = require("report").done

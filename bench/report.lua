-- Shared wrk `done` callback: one JSON line with throughput and latency percentiles (ms).
-- `extra` (optional): { errors = n counted on top of wrk's own, fields = {{"name", n}, ...} }.
local M = {}
function M.done(summary, latency, requests, extra)
  extra = extra or {}
  local secs = summary.duration / 1e6
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout + (extra.errors or 0)
  local more = ""
  for _, f in ipairs(extra.fields or {}) do
    more = more .. string.format(',"%s":%d', f[1], f[2])
  end
  io.write(string.format(
    '{"requests":%d,"seconds":%.2f,"rps":%.0f,"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,"errors":%d,"non_2xx":%d%s}\n',
    summary.requests, secs, summary.requests / secs,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, errors, summary.errors.status, more))
end
return M

#!/usr/bin/env bash
# Reproduces the figures in BENCHMARKS.md: loopback only, bounded in time.
#
#   bench/run.sh [DURATION] [CONNECTIONS]     (defaults: 15s, 32)
#
# Needs wrk (Debian: apt-get install wrk) and curl. Prints one JSON line per
# measurement, plus the bridge's resident memory after each run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DURATION="${1:-15s}"
CONNECTIONS="${2:-32}"
THREADS=2
export LUA_PATH="$PWD/bench/?.lua;;"
LOG_DIR="$(mktemp -d)"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$LOG_DIR"' EXIT

cargo build --profile dist --quiet --bin dms-bridge --example bare_rmcp
BIN=target/dist/dms-bridge
BARE=target/dist/examples/bare_rmcp

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
wait_ready() {
  for _ in $(seq 100); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "not ready: $1" >&2; return 1
}
mcp() { # url token tool args -> response body
  curl -fsS "$1" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2025-06-18' -H "Authorization: Bearer $2" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$3\",\"arguments\":$4}}"
}
load() { # label url script [extra wrk args] ; TOKEN/TOOL/ARGS from the environment
  local label=$1 url=$2 script=$3
  wrk -t"$THREADS" -c"$CONNECTIONS" -d3s -s "bench/$script" "$url" >/dev/null   # warm-up
  local line
  line=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "bench/$script" "$url" | tail -n 1)
  echo "{\"run\":\"$label\",\"connections\":$CONNECTIONS,${line#\{}"
}
start_demo() { # port extra-args... ; sets DEMO_PID and CDK_URL
  local port=$1; shift
  "$BIN" demo --listen "127.0.0.1:$port" "$@" >"$LOG_DIR/demo-$port.out" 2>"$LOG_DIR/demo-$port.err" &
  DEMO_PID=$!; PIDS+=("$DEMO_PID")
  wait_ready "http://127.0.0.1:$port/healthz"
  CDK_URL=$(grep -o 'CDK/Fortellis-shaped API at [^ )]*' "$LOG_DIR/demo-$port.out" | awk '{print $NF}' | sed 's/:$//')
}
start_uncached_bridge() { # port upstream-base-url ; sets BRIDGE_PID
  sed -e "s#{listen}#127.0.0.1:$1#" -e "s#{cdk_url}#$2#g" -e "s#{store}#$LOG_DIR/uncached-$1.db#" \
    bench/uncached.toml >"$LOG_DIR/uncached-$1.toml"
  "$BIN" serve --config "$LOG_DIR/uncached-$1.toml" >"$LOG_DIR/bridge-$1.out" 2>"$LOG_DIR/bridge-$1.err" &
  BRIDGE_PID=$!; PIDS+=("$BRIDGE_PID")
  wait_ready "http://127.0.0.1:$1/healthz"
}
start_bare() { # port [result-file | upstream-url] ; sets BARE_PID once it answers
  "$BARE" "127.0.0.1:$1" ${2:+"$2"} 2>>"$LOG_DIR/bare.err" & PIDS+=($!); BARE_PID=$!
  sleep 0.5
  check_ok "$(mcp "http://127.0.0.1:$1/mcp" bench-token ping '{}')"
}
check_ok() { # body must be a successful tool result
  grep -q '"isError":false' <<<"$1" || { echo "unexpected answer: ${1:0:300}" >&2; exit 1; }
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $(uname -r)"
SEARCH='{"dealership_id":"demo-cdk","limit":20}'

# (a) Ceiling: bare rmcp, one trivial tool.
port=$(free_port)
start_bare "$port"
TOKEN=bench-token TOOL=ping ARGS='{}' load "bare_rmcp_trivial_tool" "http://127.0.0.1:$port/mcp" mcp_call.lua
echo "{\"run\":\"bare_rmcp_rss\",\"rss_mb\":$(rss_mb "$BARE_PID")}"
kill "$BARE_PID"

# (b) Cached inventory.search (demo-cdk through the CDK-shaped REST adapter).
port=$(free_port); start_demo "$port"
answer=$(mcp "http://127.0.0.1:$port/mcp" demo-token-group inventory_search "$SEARCH")
check_ok "$answer"
echo "{\"run\":\"bridge_started_rss\",\"rss_mb\":$(rss_mb "$DEMO_PID")}"
python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())["result"]["structuredContent"]))' \
  <<<"$answer" >"$LOG_DIR/search-result.json"
TOKEN=demo-token-group TOOL=inventory_search ARGS="$SEARCH" load "bridge_search_cached" "http://127.0.0.1:$port/mcp" mcp_call.lua
echo "{\"run\":\"bridge_cached_rss\",\"rss_mb\":$(rss_mb "$DEMO_PID")}"
sleep 5
echo "{\"run\":\"bridge_cached_rss_5s_later\",\"rss_mb\":$(rss_mb "$DEMO_PID")}"
kill "$DEMO_PID"

# (a') Same-payload ceiling: bare rmcp answering the very result (b) sends, from memory.
port=$(free_port)
start_bare "$port" "$LOG_DIR/search-result.json"
TOKEN=bench-token TOOL=ping ARGS='{}' load "bare_rmcp_same_result" "http://127.0.0.1:$port/mcp" mcp_call.lua
kill "$BARE_PID"

# (c) Uncached inventory.search vs the mock upstream directly, at 0 ms and 20 ms upstream latency.
# The mock CDK API runs in a process of its own (a second demo, whose bridge stays idle), as a
# dealer's DMS would: the measured bridge (bench/uncached.toml) does not share its runtime.
for latency in 0 20; do
  upport=$(free_port); start_demo "$upport" --upstream-latency-ms "$latency"; UPSTREAM_PID=$DEMO_PID
  port=$(free_port); start_uncached_bridge "$port" "${CDK_URL%/cdk}"
  check_ok "$(mcp "http://127.0.0.1:$port/mcp" bench-token inventory_search "$SEARCH")"
  TOKEN=bench-token TOOL=inventory_search ARGS="$SEARCH" \
    load "bridge_search_uncached_upstream_${latency}ms" "http://127.0.0.1:$port/mcp" mcp_call.lua
  # The same with 32 different searches at once: they share upstream reads but no result.
  TOKEN=bench-token TOOL=inventory_search ARGS='{"dealership_id":"demo-cdk","limit":%d}' VARY_LIMIT=1 \
    load "bridge_search_uncached_upstream_${latency}ms_distinct" "http://127.0.0.1:$port/mcp" mcp_call.lua
  echo "{\"run\":\"bridge_uncached_${latency}ms_rss\",\"rss_mb\":$(rss_mb "$BRIDGE_PID")}"
  kill "$BRIDGE_PID"
  upstream="$CDK_URL/sales/inventory/v2/merchandisable-vehicles/?deleted=true&limit=100&offset=0"
  # Floor: bare rmcp making the same upstream call per tool call and answering only its size.
  port=$(free_port)
  start_bare "$port" "$upstream"
  TOKEN=bench-token TOOL=ping ARGS='{}' load "bare_rmcp_forward_upstream_${latency}ms" "http://127.0.0.1:$port/mcp" mcp_call.lua
  kill "$BARE_PID"
  load "direct_upstream_${latency}ms" "$upstream" upstream_get.lua
  kill "$UPSTREAM_PID"
done

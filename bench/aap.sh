#!/usr/bin/env bash
# The AAP door against the MCP door on the same data, in one run (BENCHMARKS.md
# "The AAP door"): a 20-vehicle inventory search at demo-feed by AAP v1.3
# SendMessage and by MCP tools/call inventory_search (detailed records, as AAP
# answers; and concise, MCP's default), alternated twice on one demo, loopback.
#
#   bench/aap.sh [DURATION] [CONNECTIONS] [PROFILE]   (defaults: 10s, 16, release)
#
# Needs wrk and curl. Prints one JSON line per run, and each answer's size.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DURATION="${1:-10s}"
CONNECTIONS="${2:-16}"
PROFILE="${3:-release}"
export LUA_PATH="$PWD/bench/?.lua;;"
LOG_DIR="$(mktemp -d)"
DEMO_PID=""
trap '[[ -n "$DEMO_PID" ]] && kill "$DEMO_PID" 2>/dev/null; rm -rf "$LOG_DIR"' EXIT

cargo build --profile "$PROFILE" --quiet --bin dms-bridge
BIN="target/$PROFILE/dms-bridge"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" demo --listen "127.0.0.1:$port" >"$LOG_DIR/demo.out" 2>"$LOG_DIR/demo.err" &
DEMO_PID=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done

BASE="http://127.0.0.1:$port"
SORT='"sort":{"field":"price","order":"asc"}'
AAP_DATA="{\"type\":\"inventory.search.request\",$SORT,\"pagination\":{\"limit\":20}}"
MCP_DETAILED="{\"dealership_id\":\"demo-feed\",$SORT,\"limit\":20,\"response_format\":\"detailed\"}"
MCP_CONCISE="{\"dealership_id\":\"demo-feed\",$SORT,\"limit\":20}"

aap_once() {
  curl -fsS "$BASE/aap/demo-feed" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    -H 'Authorization: Bearer demo-token-group' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"m\",\"role\":\"ROLE_USER\",\"parts\":[{\"data\":$AAP_DATA}]}}}"
}
mcp_once() { # args
  curl -fsS "$BASE/mcp" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2025-06-18' -H 'Authorization: Bearer demo-token-group' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"inventory_search\",\"arguments\":$1}}"
}
# Each answer once, checked, with its size: the same 20 vehicles by both doors.
a=$(aap_once); grep -q '"result"' <<<"$a" || { echo "AAP answer: ${a:0:300}" >&2; exit 1; }
d=$(mcp_once "$MCP_DETAILED"); grep -q '"isError":false' <<<"$d" || { echo "MCP answer: ${d:0:300}" >&2; exit 1; }
c=$(mcp_once "$MCP_CONCISE"); grep -q '"isError":false' <<<"$c" || { echo "MCP answer: ${c:0:300}" >&2; exit 1; }
echo "{\"answer_bytes\":{\"aap\":${#a},\"mcp_detailed\":${#d},\"mcp_concise\":${#c}}}"

run() { # label script ; TOKEN/DATA/MEDIA/TOOL/ARGS from the environment
  local url=$BASE/mcp
  [[ $2 == aap_call.lua ]] && url=$BASE/aap/demo-feed
  wrk -t2 -c"$CONNECTIONS" -d2s -s "bench/$2" "$url" >/dev/null
  local line
  line=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s "bench/$2" "$url" | tail -n 1)
  echo "{\"run\":\"$1\",\"connections\":$CONNECTIONS,${line#\{}"
}
echo "# $(date -u +%FT%TZ) $(nproc) cores, profile $PROFILE, wrk -t2 -c$CONNECTIONS -d$DURATION"
for round in 1 2; do
  TOKEN=demo-token-group DATA="$AAP_DATA" MEDIA=inventory-search run "aap_search_r$round" aap_call.lua
  TOKEN=demo-token-group TOOL=inventory_search ARGS="$MCP_DETAILED" run "mcp_search_detailed_r$round" mcp_call.lua
  TOKEN=demo-token-group TOOL=inventory_search ARGS="$MCP_CONCISE" run "mcp_search_concise_r$round" mcp_call.lua
done

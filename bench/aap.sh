#!/usr/bin/env bash
# The AAP door against the MCP door on the same data, in one run (BENCHMARKS.md
# "The AAP door"): a 20-vehicle inventory search at demo-feed by AAP v1.3
# SendMessage and by MCP tools/call inventory_search (detailed records, as AAP
# answers; and concise, MCP's default), alternated twice on one demo, loopback.
# Then the same search at demo-cdk by both doors on a bridge with the read cache
# off (bench/aap_uncached.toml, its upstream the demo's mock CDK API), so that
# every answer is made and translated anew.
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
BRIDGE_PID=""
trap 'kill $DEMO_PID $BRIDGE_PID 2>/dev/null; rm -rf "$LOG_DIR"' EXIT

cargo build --profile "$PROFILE" --quiet --bin dms-bridge
BIN="target/$PROFILE/dms-bridge"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ready() {
  for _ in $(seq 100); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "not ready: $1" >&2; return 1
}
port=$(free_port)
"$BIN" demo --listen "127.0.0.1:$port" >"$LOG_DIR/demo.out" 2>"$LOG_DIR/demo.err" &
DEMO_PID=$!
wait_ready "http://127.0.0.1:$port/healthz"

BASE="http://127.0.0.1:$port"
SORT='"sort":{"field":"price","order":"asc"}'
AAP_DATA="{\"type\":\"inventory.search.request\",$SORT,\"pagination\":{\"limit\":20}}"
MCP_DETAILED="{\"dealership_id\":\"demo-feed\",$SORT,\"limit\":20,\"response_format\":\"detailed\"}"
MCP_CONCISE="{\"dealership_id\":\"demo-feed\",$SORT,\"limit\":20}"

aap_once() { # [base dealership token]
  curl -fsS "${1:-$BASE}/aap/${2:-demo-feed}" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    -H "Authorization: Bearer ${3:-demo-token-group}" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"m\",\"role\":\"ROLE_USER\",\"parts\":[{\"data\":$AAP_DATA}]}}}"
}
mcp_once() { # args [base token]
  curl -fsS "${2:-$BASE}/mcp" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2025-06-18' -H "Authorization: Bearer ${3:-demo-token-group}" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"inventory_search\",\"arguments\":$1}}"
}
# Each answer once, checked, with its size: the same 20 vehicles by both doors.
a=$(aap_once); grep -q '"result"' <<<"$a" || { echo "AAP answer: ${a:0:300}" >&2; exit 1; }
d=$(mcp_once "$MCP_DETAILED"); grep -q '"isError":false' <<<"$d" || { echo "MCP answer: ${d:0:300}" >&2; exit 1; }
c=$(mcp_once "$MCP_CONCISE"); grep -q '"isError":false' <<<"$c" || { echo "MCP answer: ${c:0:300}" >&2; exit 1; }
echo "{\"answer_bytes\":{\"aap\":${#a},\"mcp_detailed\":${#d},\"mcp_concise\":${#c}}}"

run() { # label script [base dealership] ; TOKEN/DATA/MEDIA/TOOL/ARGS from the environment
  local base=${3:-$BASE} url
  url=$base/mcp
  [[ $2 == aap_call.lua ]] && url=$base/aap/${4:-demo-feed}
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

# Uncached: a bridge of its own with the read cache off, demo-cdk by both doors.
CDK_URL=$(grep -o 'CDK/Fortellis-shaped API at [^ )]*' "$LOG_DIR/demo.out" | awk '{print $NF}' | sed 's/:$//')
uport=$(free_port)
sed -e "s#{listen}#127.0.0.1:$uport#" -e "s#{cdk_url}#${CDK_URL%/cdk}#g" -e "s#{store}#$LOG_DIR/uncached.db#" \
  bench/aap_uncached.toml >"$LOG_DIR/uncached.toml"
"$BIN" serve --config "$LOG_DIR/uncached.toml" >"$LOG_DIR/bridge.out" 2>"$LOG_DIR/bridge.err" &
BRIDGE_PID=$!
wait_ready "http://127.0.0.1:$uport/healthz"
UBASE="http://127.0.0.1:$uport"
U_MCP="{\"dealership_id\":\"demo-cdk\",$SORT,\"limit\":20,\"response_format\":\"detailed\"}"
# The mirror's first load may still be under way: wait for a full answer.
for _ in $(seq 100); do
  a=$(aap_once "$UBASE" demo-cdk bench-token) && grep -q '"vehicles":\[{' <<<"$a" && break
  sleep 0.1
done
grep -q '"vehicles":\[{' <<<"$a" || { echo "uncached AAP answer: ${a:0:300}" >&2; exit 1; }
d=$(mcp_once "$U_MCP" "$UBASE" bench-token); grep -q '"isError":false' <<<"$d" || { echo "uncached MCP answer: ${d:0:300}" >&2; exit 1; }
echo "{\"uncached_answer_bytes\":{\"aap\":${#a},\"mcp_detailed\":${#d}}}"
for round in 1 2; do
  TOKEN=bench-token DATA="$AAP_DATA" MEDIA=inventory-search run "aap_search_uncached_r$round" aap_call.lua "$UBASE" demo-cdk
  TOKEN=bench-token TOOL=inventory_search ARGS="$U_MCP" run "mcp_search_detailed_uncached_r$round" mcp_call.lua "$UBASE"
done

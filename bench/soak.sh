#!/usr/bin/env bash
# RSS over a sustained load: uncached inventory.search (every call maps the
# upstream's 72 records), sampling the bridge's resident memory every INTERVAL.
#
#   bench/soak.sh [DURATION_S] [INTERVAL_S] [MAX_GROWTH_PCT] [WARMUP_S]   (defaults: 600 30 10 10)
#
# The warm-up is load before the first sample: the allocator's pools fill over
# the first ~20 s of load, and that is not growth.
#
# Exits non-zero if RSS at the end exceeds the first post-warm-up sample by more
# than MAX_GROWTH_PCT percent. Loopback only; stops by itself.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DURATION="${1:-600}"
INTERVAL="${2:-30}"
MAX_GROWTH="${3:-10}"
WARMUP="${4:-10}"
export LUA_PATH="$PWD/bench/?.lua;;"
LOG="$(mktemp)"
trap 'kill "${DEMO_PID:-0}" "${WRK_PID:-0}" 2>/dev/null || true; rm -f "$LOG"' EXIT

# The binary under test: a release build unless DMS_BRIDGE_BIN names another
# (CI runs its dev build: it checks growth, not speed).
BIN="${DMS_BRIDGE_BIN:-target/release/dms-bridge}"
[[ -x "$BIN" ]] || cargo build --release --quiet --bin dms-bridge
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" demo --listen "127.0.0.1:$port" --no-cache >"$LOG" 2>&1 &
DEMO_PID=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done

rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$DEMO_PID/status"; }
# Varying page sizes make varied result sizes; the cache is off so each call reaches the upstream.
TOKEN=demo-token-group TOOL=inventory_search ARGS='{"dealership_id":"demo-cdk","limit":25,"filters":{"condition":["used","cpo"]}}' \
  wrk -t2 -c16 -d"$((DURATION + WARMUP))s" -s bench/mcp_call.lua "http://127.0.0.1:$port/mcp" >"$LOG.wrk" &
WRK_PID=$!

sleep "$WARMUP"
first=$(rss_kb); echo "t=warm rss_kb=$first"
elapsed=0
while kill -0 "$WRK_PID" 2>/dev/null; do
  sleep "$INTERVAL"; elapsed=$((elapsed + INTERVAL))
  kill -0 "$DEMO_PID" 2>/dev/null || { echo "bridge died" >&2; exit 1; }
  echo "t=${elapsed}s rss_kb=$(rss_kb)"
done
last=$(rss_kb)
tail -n 1 "$LOG.wrk"; rm -f "$LOG.wrk"
growth=$(( (last - first) * 100 / first ))
echo "soak: first=${first}kB last=${last}kB growth=${growth}% (limit ${MAX_GROWTH}%)"
(( growth <= MAX_GROWTH ))

#!/usr/bin/env bash
# Resident memory of `dms-bridge demo` (BENCHMARKS.md "Memory"): at start,
# after the first inventory_search, and after 15 s of cached inventory_search
# load (wrk -t2 -c32, bench/mcp_call.lua), each split into the binary's own
# file-backed pages (its code and read-only data) and anonymous memory (heaps,
# stacks), from /proc/PID/status.
#
#   bench/memory.sh [BINARY ...]     (default: target/dist/dms-bridge, built when missing)
#
# Several binaries are measured one after the other, each on a fresh demo, so
# that a before/after pair is compared in one run. Loopback only; stops by itself.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LUA_PATH="$PWD/bench/?.lua;;"
DURATION="${DURATION:-15s}"

if (($# == 0)); then
  [[ -x target/dist/dms-bridge ]] || cargo build --profile dist --quiet --bin dms-bridge
  set -- target/dist/dms-bridge
fi
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }

field() { awk -v k="$2:" '$1 == k {printf "%.1f", $2/1024}' "/proc/$1/status"; }
sample() { # pid label
  printf '{"binary":"%s","at":"%s","rss_mb":%s,"file_mb":%s,"anon_mb":%s,"threads":%s}\n' \
    "$BIN" "$2" "$(field "$1" VmRSS)" "$(field "$1" RssFile)" "$(field "$1" RssAnon)" "$(ls "/proc/$1/task" | wc -l)"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r), wrk -t2 -c32 -d$DURATION"
for BIN in "$@"; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$BIN" demo --listen "127.0.0.1:$port" >/dev/null 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true' EXIT
  for _ in $(seq 300); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  sample "$pid" start
  curl -fsS "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'Authorization: Bearer demo-token-group' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"inventory_search","arguments":{"dealership_id":"demo-cdk","limit":20}}}' >/dev/null
  sleep 0.5
  sample "$pid" first_call
  TOKEN=demo-token-group TOOL=inventory_search ARGS='{"dealership_id":"demo-cdk","limit":20}' \
    wrk -t2 -c32 -d"$DURATION" -s bench/mcp_call.lua "http://127.0.0.1:$port/mcp" >/dev/null
  sleep 1
  sample "$pid" after_load
  kill "$pid"
  wait "$pid" 2>/dev/null || true
done

#!/usr/bin/env bash
# Lead figures for BENCHMARKS.md ("Leads"): loopback only, bounded in time.
#
#   bench/leads.sh [DURATION] [CONNECTIONS]     (defaults: 15s, 32)
#
# (a) leads.create throughput: every call commits a lead and its outbox row to
#     the demo's on-disk SQLite store before answering (bench/leads.lua).
# (b) accept -> CRM delivery latency at 5 leads/s, under the demo CRM's
#     10 requests/s intake quota (examples/lead_latency.rs).
# (c) the same at 50 leads/s, 5x over that quota: the outbox queues behind it.
#
# Needs wrk, curl, python3; uses sqlite3 for the store's counts when installed.
# Prints one JSON line per measurement.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DURATION="${1:-15s}"
CONNECTIONS="${2:-32}"
THREADS=2
export LUA_PATH="$PWD/bench/?.lua;;"
LOG_DIR="$(mktemp -d)"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$LOG_DIR"' EXIT

cargo build --profile dist --quiet --bin dms-bridge --example lead_latency
BIN=target/dist/dms-bridge
LATENCY=target/dist/examples/lead_latency

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
wait_ready() {
  for _ in $(seq 100); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "not ready: $1" >&2; return 1
}
start_demo() { # port ; sets DEMO_PID, MCP_URL, CRM_RECEIVED, STORE
  local port=$1
  "$BIN" demo --listen "127.0.0.1:$port" >"$LOG_DIR/demo-$port.out" 2>"$LOG_DIR/demo-$port.err" &
  DEMO_PID=$!; PIDS+=("$DEMO_PID")
  wait_ready "http://127.0.0.1:$port/healthz"
  MCP_URL="http://127.0.0.1:$port/mcp"
  STORE="${TMPDIR:-/tmp}/dms-bridge-demo-$DEMO_PID.db"   # where `demo` puts its store
  # The banner names the CRM's /adf/received; failing that, ask each of the demo's ports.
  CRM_RECEIVED=$(grep -o 'curl http://[^ ]*/adf/received' "$LOG_DIR/demo-$port.out" | awk '{print $2}' | head -n 1 || true)
  if [[ -z $CRM_RECEIVED ]]; then
    for p in $(ss -ltnp | grep "pid=$DEMO_PID," | grep -o '127\.0\.0\.1:[0-9]*' | cut -d: -f2); do
      if curl -fs -m 2 "http://127.0.0.1:$p/adf/received" 2>/dev/null | grep -q '"duplicates_dropped"'; then
        CRM_RECEIVED="http://127.0.0.1:$p/adf/received"; break
      fi
    done
  fi
  [[ -n $CRM_RECEIVED ]] || { echo "demo CRM intake not found" >&2; return 1; }
}
stop_demo() { # lets the demo finish (it removes its store at exit), at most 10 s
  kill "$DEMO_PID" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$DEMO_PID" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$DEMO_PID" 2>/dev/null || true
}
sql() { command -v sqlite3 >/dev/null && [[ -f $STORE ]] && sqlite3 -readonly "$STORE" "$1" || echo null; }

echo "# $(date -u +%FT%TZ) $(nproc) cores, wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $(uname -r)"

# (a) leads.create throughput against the SQLite store.
port=$(free_port); start_demo "$port"
RUN="warm-$$" wrk -t"$THREADS" -c"$CONNECTIONS" -d3s -s bench/leads.lua "$MCP_URL" >/dev/null   # warm-up
line=$(RUN="run-$$" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s bench/leads.lua "$MCP_URL" | tail -n 1)
echo "{\"run\":\"leads_create_sqlite\",\"connections\":$CONNECTIONS,${line#\{}"
received=$(grep -o '"received":[0-9]*' <<<"$line" | cut -d: -f2)
echo "{\"run\":\"leads_create_sqlite_after\",\"rss_mb\":$(rss_mb "$DEMO_PID"),\"received_answers\":${received:-null},\"stored_leads_incl_warmup\":$(sql 'SELECT count(*) FROM leads'),\"outbox_pending\":$(sql "SELECT count(*) FROM lead_deliveries WHERE state = 'pending'"),\"crm_received\":$(curl -fs "$CRM_RECEIVED" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["leads"]))')}"
stop_demo

# (b) and (c): accept -> delivery latency below and above the CRM's 10/s quota.
for spec in "5 150" "50 300"; do
  port=$(free_port); start_demo "$port"
  # shellcheck disable=SC2086  # "RATE COUNT"
  timeout 300 "$LATENCY" "$MCP_URL" "$CRM_RECEIVED" $spec
  stop_demo
done

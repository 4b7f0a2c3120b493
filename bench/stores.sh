#!/usr/bin/env bash
# SQLite against PostgreSQL (BENCHMARKS.md "Replicas"): the demo's leads.create
# and cached inventory_search, once on its SQLite file and once on a throwaway
# PostgreSQL on loopback. Loopback only, bounded in time.
#
#   bench/stores.sh [DURATION] [CONNECTIONS]     (defaults: 15s, 32)
#
# Needs wrk, curl, python3 and PostgreSQL's server binaries (initdb, pg_ctl;
# Debian: apt-get install postgresql). Prints one JSON line per measurement.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DURATION="${1:-15s}"
CONNECTIONS="${2:-32}"
THREADS=2
export LUA_PATH="$PWD/bench/?.lua;;"
PG_DIR="$(mktemp -d /tmp/dms-bridge-bench-pg.XXXXXX)"
PIDS=()
PG_BIN="$(dirname "$(command -v initdb 2>/dev/null || compgen -G '/usr/lib/postgresql/*/bin/initdb' | sort -V | tail -n 1)")"
as_pg() { if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  as_pg "$PG_BIN/pg_ctl" stop -m immediate -D "$PG_DIR/data" >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
trap cleanup EXIT

cargo build --profile dist --quiet --bin dms-bridge
BIN=target/dist/dms-bridge

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ready() {
  for _ in $(seq 100); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "not ready: $1" >&2; return 1
}
load() { # label url script ; TOKEN/TOOL/ARGS from the environment for mcp_call.lua
  local label=$1 url=$2 script=$3
  RUN="warm-$label-$$" wrk -t"$THREADS" -c"$CONNECTIONS" -d3s -s "bench/$script" "$url" >/dev/null
  local line
  line=$(RUN="run-$label-$$" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "bench/$script" "$url" | tail -n 1)
  echo "{\"run\":\"$label\",\"connections\":$CONNECTIONS,${line#\{}"
}
measure() { # store-label [--store-url URL]
  local label=$1; shift
  local port; port=$(free_port)
  "$BIN" demo --listen "127.0.0.1:$port" "$@" >/dev/null 2>"$PG_DIR/demo-$label.err" &
  local pid=$!; PIDS+=("$pid")
  wait_ready "http://127.0.0.1:$port/healthz"
  local url="http://127.0.0.1:$port/mcp"
  load "leads_create_$label" "$url" leads.lua
  TOKEN=demo-token-group TOOL=inventory_search ARGS='{"dealership_id":"demo-cdk","limit":20}' \
    load "inventory_search_cached_$label" "$url" mcp_call.lua
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

# PostgreSQL as a dealer would run it (fsync on), in a temporary cluster.
chmod 755 "$PG_DIR"
[[ $EUID -eq 0 ]] && chown postgres "$PG_DIR"
as_pg "$PG_BIN/initdb" --auth=trust --username=postgres --encoding=UTF8 -D "$PG_DIR/data" >/dev/null
PG_PORT=$(free_port)
as_pg "$PG_BIN/pg_ctl" start -w -D "$PG_DIR/data" -l "$PG_DIR/server.log" \
  -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1" >/dev/null

echo "# $(date -u +%FT%TZ) $(nproc) cores, wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $(uname -r), $("$PG_BIN/postgres" --version)"
measure sqlite
measure postgres --store-url "postgres://postgres@127.0.0.1:$PG_PORT/postgres"   # the cluster's initial database

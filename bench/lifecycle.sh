#!/usr/bin/env bash
# The customer data lifecycle's costs (BENCHMARKS.md, issue 34):
# leads.create / leads.get p50 and bytes per lead with customer data sealed
# and in the clear; purge and erasure throughput on a SQLite file and on a
# throwaway PostgreSQL on loopback (fsync on). Loopback only, bounded.
#
#   bench/lifecycle.sh [SAMPLES] [LEADS]     (defaults: 300, 10000)
#
# Needs PostgreSQL's server binaries (initdb, pg_ctl; Debian: postgresql).
# Prints one JSON line per measurement.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SAMPLES="${1:-300}"
LEADS="${2:-10000}"
PG_DIR="$(mktemp -d /tmp/dms-bridge-bench-pg.XXXXXX)"
PG_BIN="$(dirname "$(command -v initdb 2>/dev/null || compgen -G '/usr/lib/postgresql/*/bin/initdb' | sort -V | tail -n 1)")"
as_pg() { if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  as_pg "$PG_BIN/pg_ctl" stop -m immediate -D "$PG_DIR/data" >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

cargo build --release --quiet --example data_lifecycle_load
RUN=target/release/examples/data_lifecycle_load

chmod 755 "$PG_DIR"
[[ $EUID -eq 0 ]] && chown postgres "$PG_DIR"
as_pg "$PG_BIN/initdb" --auth=trust --username=postgres --encoding=UTF8 -D "$PG_DIR/data" >/dev/null
PG_PORT=$(free_port)
as_pg "$PG_BIN/pg_ctl" start -w -D "$PG_DIR/data" -l "$PG_DIR/server.log" \
  -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1" >/dev/null

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r), release profile, $("$PG_BIN/postgres" --version)"
DMS_BRIDGE_LOG=error "$RUN" calls "$SAMPLES"
DMS_BRIDGE_LOG=error "$RUN" store "sqlite://$PG_DIR/lifecycle.db" "$LEADS"
DMS_BRIDGE_LOG=error "$RUN" store "postgres://postgres@127.0.0.1:$PG_PORT/postgres" "$LEADS"

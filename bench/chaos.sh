#!/usr/bin/env bash
# The chaos test as a benchmark (BENCHMARKS.md "Replicas"): tests/chaos.rs run
# with 1, 2 and 3 replicas under the same client load, keeping the summary
# line each run prints (what the vendor saw per second, leads, refusals).
# Loopback only; each run is bounded (DMS_BRIDGE_CHAOS_SECONDS, default 16).
#
#   bench/chaos.sh [SECONDS]
#
# Needs what the test needs: PostgreSQL's server binaries and redis-server.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export DMS_BRIDGE_CHAOS_SECONDS="${1:-16}"
# The dev profile, as `cargo test` builds it: what the vendor sees is set by
# the quota, not by the bridge's speed (the load only has to exceed it).
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r), dev profile, ${DMS_BRIDGE_CHAOS_SECONDS}s per run"
cargo test --quiet --test integration --no-run
for replicas in 1 2 3; do
  DMS_BRIDGE_CHAOS_REPLICAS=$replicas cargo test --quiet --test integration chaos:: -- --nocapture 2>&1 |
    grep '^chaos summary:' || { echo "the run with $replicas replicas failed" >&2; exit 1; }
done

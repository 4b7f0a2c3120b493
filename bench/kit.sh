#!/usr/bin/env bash
# The integrator's kit, timed (BENCHMARKS.md "The integrator's kit"): `mapping
# test` on the shipped fixtures, `verify --demo` per upstream (the seconds each
# report states), `probe --demo`, and `conform` against a running demo.
# Usage: bench/kit.sh [PROFILE]   (default release; the binary is built first)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
profile="${1:-release}"
cargo build --quiet --profile "$profile" --bin dms-bridge
# cargo keeps the dev profile in target/debug.
if [[ "$profile" == dev ]]; then dir=target/debug; else dir="target/$profile"; fi
bin="$PWD/$dir/dms-bridge"
out="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$out"' EXIT

seconds() { # command... -> wall seconds, the command's output discarded
  local start=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 || true
  awk "BEGIN { printf \"%.2f\", $EPOCHREALTIME - $start }"
}

echo "profile=$profile commit=$(git rev-parse --short HEAD) cores=$(nproc)"
echo "mapping_test_cdk_inventory_s=$(seconds "$bin" mapping test --profile cdk-fortellis \
  --response wiremock-fixtures/cdk/merchandisable-vehicles.json --json)"
echo "mapping_test_opentrack_soap_s=$(seconds "$bin" mapping test --profile opentrack --read get \
  --response wiremock-fixtures/opentrack/repair-order-details-60080.xml --json)"
echo "probe_cdk_s=$(seconds "$bin" probe --demo --upstream cdk-riverside --json)"

echo "verify_demo_total_s=$(DMS_BRIDGE_LOG=error seconds "$bin" verify --demo --json "$out/verify.json")"
python3 - "$out/verify.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    failed = sum(c["verdict"] == "fail" for c in r["checks"]) + sum(c["verdict"] == "fail" for c in r["cells"])
    domains = max(len(r["domains"]), 1)
    print(f"verify upstream={r['upstream']} kind={r['kind']} checks={len(r['checks'])} "
          f"cells={len(r['cells'])} cells_per_domain={len(r['cells']) // domains if r['cells'] else 0} "
          f"failed={failed} seconds={r['seconds']:.1f}")
PY

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
DMS_BRIDGE_LOG=error "$bin" demo --listen "127.0.0.1:$port" >/dev/null &
for _ in $(seq 1 600); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
echo "conform_demo_s=$(seconds "$bin" conform --url "http://127.0.0.1:$port/mcp" --token demo-token-cdk \
  --other-dealership demo-feed --sandbox-dealership demo-cdk)"

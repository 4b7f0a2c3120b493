#!/usr/bin/env bash
# Runs the bridge from a release archive as an operator without a Rust
# toolchain would: unpack it into an empty directory, start `dms-bridge demo`
# with an empty environment (PATH of the base system only, a fresh HOME), and
# wait until it answers /readyz and an MCP tools/list. Prints how long that
# took from the unpacking (the BENCHMARKS.md figure "archive to a running
# bridge"), then stops it.
#
# Usage: scripts/archive_smoke.sh ARCHIVE.tar.gz
set -euo pipefail
archive=${1:?usage: scripts/archive_smoke.sh ARCHIVE.tar.gz}
archive=$(cd "$(dirname "$archive")" && pwd)/$(basename "$archive")
dir=$(mktemp -d)
pid=""
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

(cd "$(dirname "$archive")" && sha256sum --check --quiet "$(basename "$archive").sha256")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start=$(date +%s.%N)
tar -xzf "$archive" -C "$dir"
bin=$(find "$dir" -maxdepth 2 -name dms-bridge -type f | head -n 1)
mkdir -p "$dir/home"
env -i PATH=/usr/bin:/bin HOME="$dir/home" TMPDIR="$dir" \
  "$bin" demo --listen "127.0.0.1:$port" >"$dir/demo.log" 2>&1 &
pid=$!
deadline=$((SECONDS + 60))
until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
  if ((SECONDS > deadline)) || ! kill -0 "$pid" 2>/dev/null; then
    echo "the bridge from $archive never answered /readyz; its log:" >&2
    cat "$dir/demo.log" >&2
    exit 1
  fi
  sleep 0.05
done
tools=$(curl -fsS "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' \
  -H 'Authorization: Bearer demo-token-group' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
end=$(date +%s.%N)
grep -q 'inventory' <<<"$tools" || { echo "tools/list did not answer: $tools" >&2; exit 1; }
# A static binary has no program interpreter (the dynamic loader) to request.
if readelf -l "$bin" | grep -q "program interpreter"; then linkage="dynamically linked"; else linkage="static"; fi
awk -v s="$start" -v e="$end" -v size="$(du -h "$bin" | cut -f1)" -v l="$linkage" \
  'BEGIN { printf "archive to a running bridge: %.2f s (unpack, start, /readyz, tools/list); binary %s, %s\n", e - s, size, l }'

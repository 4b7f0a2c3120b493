#!/usr/bin/env bash
# Tokens per tool list and per answer, counted with o200k (BENCHMARKS.md "Tokens").
#
#   bench/tokens.sh [BINARY]     (default: target/debug/dms-bridge, built when missing)
#
# Starts `BINARY demo` on a free loopback port, installs the pinned tokenizer
# (bench/tokens/package-lock.json) and runs bench/tokens/count.mjs against it.
# Exits non-zero when a target is missed. Loopback only; stops by itself.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BIN="${1:-target/debug/dms-bridge}"
[[ -x "$BIN" ]] || cargo build --quiet --bin dms-bridge
LOG="$(mktemp)"
trap 'kill "${DEMO_PID:-0}" 2>/dev/null || true; rm -f "$LOG"' EXIT

npm ci --prefix bench/tokens --no-audit --no-fund --loglevel=error >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" demo --listen "127.0.0.1:$port" >"$LOG" 2>&1 &
DEMO_PID=$!
for _ in $(seq 300); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) $BIN, o200k (gpt-tokenizer $(node -p 'require("./bench/tokens/node_modules/gpt-tokenizer/package.json").version'))"
node bench/tokens/count.mjs "http://127.0.0.1:$port/mcp" demo-token-group 20000

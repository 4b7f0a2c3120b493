#!/usr/bin/env bash
# The test command (README "Quick start"): installs what the tests need beyond
# the Rust toolchain when the machine lacks it, then runs `cargo test` with any
# arguments given. The tests of PostgreSQL, of shared quotas, of the Grafana
# dashboard and of the status page start servers of their own on loopback
# (initdb into a temporary directory, redis-server, prometheus and chromedriver
# with headless Chromium on a free port); without the binaries they fail, never
# skip, so they are installed here from Debian packages (apt-get, through sudo
# when not root).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# rust-toolchain.toml pins the toolchain; offline, the installed stable of that version serves.
source scripts/toolchain.sh
link_pinned_toolchain

has_postgres() {
  command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
}
missing=()
has_postgres || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
if ((${#missing[@]})); then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "The tests need ${missing[*]} (PostgreSQL's server binaries, redis-server, prometheus, chromium, chromium-driver); install them and run again." >&2
    exit 1
  fi
  as_root=()
  if ((EUID != 0)); then as_root=(sudo); fi
  echo "Installing ${missing[*]} for the tests (Debian packages)." >&2
  "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
    { "${as_root[@]}" apt-get update -qq >/dev/null && "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi
# Debian keeps PostgreSQL's server binaries off PATH; the tests look there too.
if ! command -v initdb >/dev/null 2>&1; then
  pg_bin="$(compgen -G "/usr/lib/postgresql/*/bin" | sort -V | tail -n 1 || true)"
  if [[ -n "$pg_bin" ]]; then export PATH="$PATH:$pg_bin"; fi
fi
echo "Test servers: $(command -v initdb), $(command -v redis-server), $(command -v prometheus), $(command -v chromedriver)" >&2
exec cargo test "$@"

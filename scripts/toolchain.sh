#!/usr/bin/env bash
# Sourced by .ci/run and scripts/test.sh. rust-toolchain.toml pins the
# toolchain; rustup downloads it where it is missing. A machine that cannot
# reach rustup's servers but whose installed stable toolchain is that very
# version gets the pinned name pointed at it, instead of a failed download.
# Any other mismatch is left to rustup, which says what it needs.
pinned_toolchain() {
  sed -n 's/^channel = "\(.*\)"/\1/p' "$(dirname "${BASH_SOURCE[0]}")/../rust-toolchain.toml"
}

link_pinned_toolchain() {
  command -v rustup >/dev/null 2>&1 || return 0
  local pinned host stable_dir
  pinned="$(pinned_toolchain)"
  [[ -n "$pinned" ]] || return 0
  if rustup toolchain list | grep -q "^$pinned-"; then return 0; fi
  host="$(rustc +stable -vV 2>/dev/null | sed -n 's/^host: //p')"
  [[ -n "$host" ]] || return 0
  if [[ "$(rustc +stable --version 2>/dev/null)" == "rustc $pinned "* ]]; then
    stable_dir="${RUSTUP_HOME:-$HOME/.rustup}/toolchains/stable-$host"
    ln -s "$stable_dir" "${RUSTUP_HOME:-$HOME/.rustup}/toolchains/$pinned-$host"
    echo "Toolchain $pinned: the installed stable is that version; linked it." >&2
  fi
}

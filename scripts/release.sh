#!/usr/bin/env bash
# Builds the release archive of one platform: a static dms-bridge (musl libc,
# no shared library needed, so it runs on any x86_64 Linux and on an empty
# container base) and what an operator needs beside it:
#
#   target/release-archives/dms-bridge-<version>-<target>.tar.gz (+ .sha256)
#
# Usage: scripts/release.sh [--profile dist|release] [--target TRIPLE]
# `dist` (the default) is what releases ship and BENCHMARKS.md measures: one
# optimisation unit, fat LTO: a longer build. CI builds `release`
# (same code, quicker to build) to prove the archive and the image work.
# The musl target is added with rustup when missing, and the C parts (ring,
# SQLite, mimalloc) are compiled with musl-gcc from Debian's musl-tools,
# installed when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/toolchain.sh
link_pinned_toolchain

profile=dist
target=x86_64-unknown-linux-musl
while (($#)); do
  case $1 in
    --profile) profile=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    *) echo "usage: scripts/release.sh [--profile dist|release] [--target TRIPLE]" >&2; exit 2 ;;
  esac
done

as_root=()
if ((EUID != 0)); then as_root=(sudo); fi
if [[ $target != "$(rustc -vV | sed -n 's/^host: //p')" ]] && ! rustup target list --installed | grep -qx "$target"; then
  echo "Adding the Rust target $target." >&2
  rustup target add "$target"
fi
if [[ $target == *-musl ]] && ! command -v musl-gcc >/dev/null 2>&1; then
  echo "Installing musl-tools (Debian package) for the C parts of a musl build." >&2
  "${as_root[@]}" apt-get install -y -qq musl-tools >/dev/null 2>&1 ||
    { "${as_root[@]}" apt-get update -qq >/dev/null && "${as_root[@]}" apt-get install -y -qq musl-tools >/dev/null; }
fi

cargo build --locked --profile "$profile" --target "$target" --bin dms-bridge
binary="target/$target/$profile/dms-bridge"
version=$("$binary" --version | awk '{print $2}')
name="dms-bridge-$version-$target"
out=target/release-archives
stage="$out/$name"
rm -rf "$stage"
mkdir -p "$stage/deploy"
install -m 0755 "$binary" "$stage/dms-bridge"
cp README.md LICENSE TOOLSET.md "$stage/"
cp -r docs "$stage/docs"
cp -r deploy/systemd deploy/grafana deploy/compose deploy/container "$stage/deploy/"
# Owners and times fixed in the archive (whether two builds give the same bytes is unchecked).
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='@0' -C "$out" -cf - "$name" |
  gzip -n -9 >"$out/$name.tar.gz"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
rm -rf "$stage"
echo "$out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1); binary $(du -h "$binary" | cut -f1), $profile profile)"

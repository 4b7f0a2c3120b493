#!/usr/bin/env bash
# Builds the dms-bridge container image from a release archive
# (scripts/release.sh) with podman, from deploy/container/Containerfile: the
# static binary on an empty base, so nothing is pulled from a registry.
# With --smoke it then runs the image as CI does: as its non-root user, on a
# read-only root file system, all capabilities dropped, `dms-bridge demo`
# answering MCP on loopback; and prints the image's size.
#
# Usage: scripts/container.sh ARCHIVE.tar.gz [--smoke]
#
# podman and runc come from Debian packages (installed when missing). On
# machines whose cgroup layout crun (podman's default runtime) refuses, runc
# with the cgroupfs manager works; this script sets both in its own
# containers.conf, and keeps images in the vfs driver, which needs no
# kernel overlay support.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
archive=${1:?usage: scripts/container.sh ARCHIVE.tar.gz [--smoke]}
smoke=${2:-}

as_root=()
if ((EUID != 0)); then as_root=(sudo); fi
missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
if ((${#missing[@]})); then
  echo "Installing ${missing[*]} (Debian packages)." >&2
  "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
    { "${as_root[@]}" apt-get update -qq >/dev/null && "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
CONF
export CONTAINERS_CONF="$work/containers.conf"
podman=(podman --storage-driver vfs)

# The build context: rootfs/ holds the binary, CA certificates, the user's
# passwd and group lines and /tmp; state/ becomes the user's state directory.
context="$work/context"
mkdir -p "$context/rootfs/usr/local/bin" "$context/rootfs/etc/ssl/certs" \
  "$context/rootfs/etc/dms-bridge" "$context/rootfs/tmp" "$context/state"
chmod 1777 "$context/rootfs/tmp"
chmod 0700 "$context/state"
tar -xzf "$archive" -C "$work"
unpacked=$(find "$work" -maxdepth 1 -type d -name 'dms-bridge-*' | head -n 1)
install -m 0755 "$unpacked/dms-bridge" "$context/rootfs/usr/local/bin/dms-bridge"
# A glibc build (the archive of a machine without the musl target) needs its
# shared libraries and loader beside it; a static one needs nothing.
if readelf -l "$unpacked/dms-bridge" | grep -q "program interpreter"; then
  for lib in $(ldd "$unpacked/dms-bridge" | grep -o '/[^ ]*'); do
    mkdir -p "$context/rootfs$(dirname "$lib")"
    cp -L "$lib" "$context/rootfs$lib"
  done
fi
version=$("$unpacked/dms-bridge" --version | awk '{print $2}')
certs=/etc/ssl/certs/ca-certificates.crt
if [[ ! -s $certs ]]; then
  "${as_root[@]}" apt-get install -y -qq ca-certificates >/dev/null
fi
install -m 0644 "$certs" "$context/rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\ndms-bridge:x:65532:65532:dms-bridge:/var/lib/dms-bridge:/sbin/nologin\n' \
  >"$context/rootfs/etc/passwd"
printf 'root:x:0:\ndms-bridge:x:65532:\n' >"$context/rootfs/etc/group"
cp "$ROOT/deploy/container/Containerfile" "$context/Containerfile"

image="localhost/dms-bridge:$version"
"${podman[@]}" build --quiet --runtime runc -t "$image" -f "$context/Containerfile" "$context" >/dev/null
size=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
echo "built $image: $((size / 1024 / 1024)) MiB ($size bytes)"
[[ $smoke == --smoke ]] || exit 0

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
name="dms-bridge-smoke-$$"
cleanup() { "${podman[@]}" rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
"${podman[@]}" run -d --name "$name" --runtime runc --network host --read-only \
  --cap-drop all --security-opt no-new-privileges "$image" demo --listen "127.0.0.1:$port" >/dev/null
deadline=$((SECONDS + 60))
until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
  if ((SECONDS > deadline)) || [[ $("${podman[@]}" inspect --format '{{.State.Running}}' "$name") != true ]]; then
    echo "the container never answered /readyz; its log:" >&2
    "${podman[@]}" logs "$name" >&2 || true
    exit 1
  fi
  sleep 0.5
done

fail() { echo "container smoke test: $*" >&2; "${podman[@]}" logs "$name" 2>&1 | tail -n 20 >&2; exit 1; }
pid=$("${podman[@]}" inspect --format '{{.State.Pid}}' "$name")
uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
[[ $uid == 65532 ]] || fail "the bridge runs as uid $uid, not 65532"
[[ $("${podman[@]}" inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$name") == true ]] || fail "root file system not read-only"
caps=$(awk '/^CapEff:/ {print $2}' "/proc/$pid/status")
[[ $caps == 0000000000000000 ]] || fail "effective capabilities $caps"

# One MCP exchange as a client makes it: initialize, then tools/list.
mcp() {
  curl -fsS "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' \
    -H 'Authorization: Bearer demo-token-group' -d "$1"
}
mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"container-smoke","version":"1"}}}' |
  grep -q '"serverInfo"' || fail "initialize did not answer"
tools=$(mcp '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
grep -q 'inventory' <<<"$tools" || fail "tools/list did not list the inventory tools: $tools"
search=$(mcp '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"inventory_search","arguments":{"dealership_id":"demo-cdk","limit":1}}}')
grep -q '"items":\[{"id"' <<<"$search" || fail "inventory_search found no vehicle: $search"
echo "container smoke test: $image answered initialize, tools/list and inventory_search as uid $uid, read-only root, no capabilities"

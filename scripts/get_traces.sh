#!/usr/bin/env bash
# Downloads public cache traces for `lite cache-sim` and checks each against its sha256: libCacheSim's
# CloudPhysics block-I/O sample (113,872 requests, 48,974 objects) in the four formats lite reads. Needs
# network access (curl or wget); lite itself never downloads anything.
# Usage: scripts/get_traces.sh [DEST]   (default: ./traces)
#   then: build/apps/lite cache-sim DEST/cloudPhysicsIO.oracleGeneral.bin --policy all --mrc
set -euo pipefail
DEST=${1:-traces}
# libCacheSim's data folder at the commit lite's reference counts were checked against.
BASE=https://raw.githubusercontent.com/1a1a11a/libCacheSim/aa0fc40914b2b786f4b9f4dafb099f8f332b216a/data
FILES=(
  "cloudPhysicsIO.oracleGeneral.bin 65438dd7b2d3dec7ffe8a5c9348045da92de3311f339b7b59c9a0a44e6050dea"
  "cloudPhysicsIO.vscsi 3e67d66a07e9292bb47f6c765eb24ab3ea3f1f7de7d64a1b9e8c28b38b7439b9"
  "cloudPhysicsIO.csv 987ff2213050e47d24e8ba6e010d4b3127e51aafef6a76a8a6d43d13b9156fa1"
  "cloudPhysicsIO.txt 1b48334535801ae862d53e9d7623467186eeb93054462b38021fef273cab0439"
)
fetch() {
  if command -v curl >/dev/null; then curl -fsSL -o "$2" "$1"; else wget -q -O "$2" "$1"; fi
}
mkdir -p "$DEST"
for entry in "${FILES[@]}"; do
  read -r name sum <<<"$entry"
  if [ -f "$DEST/$name" ] && echo "$sum  $DEST/$name" | sha256sum -c --quiet 2>/dev/null; then
    echo "get_traces: $DEST/$name already present and verified"
    continue
  fi
  tmp="$DEST/.$name.part"
  if ! fetch "$BASE/$name" "$tmp"; then
    rm -f "$tmp"
    echo "get_traces: error: $BASE/$name: download failed; check the network (this script needs it)" >&2
    exit 2
  fi
  if ! echo "$sum  $tmp" | sha256sum -c --quiet 2>/dev/null; then
    rm -f "$tmp"
    echo "get_traces: error: $name: sha256 differs from $sum; the upstream file changed, do not use it" >&2
    exit 2
  fi
  mv "$tmp" "$DEST/$name"
  echo "get_traces: $DEST/$name verified"
done

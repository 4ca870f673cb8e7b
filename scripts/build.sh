#!/usr/bin/env bash
# Installs dependencies (scripts/setup.sh), then configures and builds lite in build/ (Release).
# LITE_WERROR=ON (as CI sets it) makes compiler warnings errors.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${LITE_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${LITE_BUILD_TYPE:-Release}" \
        -DLITE_WERROR="${LITE_WERROR:-OFF}" >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"

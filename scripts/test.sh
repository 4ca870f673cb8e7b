#!/usr/bin/env bash
# The whole test suite from a fresh machine: install, build, then every unit and CLI test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
BUILD_DIR=${LITE_BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"

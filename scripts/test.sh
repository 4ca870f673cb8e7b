#!/usr/bin/env bash
# The whole test suite from a fresh machine: install, build, then every unit and CLI test (ctest), then the
# ASan+UBSan build of the torch-free targets and their tests (scripts/sanitize.sh; LITE_SANITIZE=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
BUILD_DIR=${LITE_BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
if [ "${LITE_SANITIZE:-1}" != 0 ]; then
  scripts/sanitize.sh
fi

#!/usr/bin/env bash
# Builds lite's Debian packages (lite, lite-dev) from the CMake install with CPack, into build/package/, and checks
# them with lintian (errors fail; warnings are printed). Usage: scripts/package.sh [--no-lintian]
# Install: sudo apt install ./build/package/lite_*.deb (apt pulls libtorch and the rest from Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${LITE_BUILD_DIR:-build}
scripts/build.sh >/dev/null
rm -rf "$BUILD_DIR/package"
cpack --config "$BUILD_DIR/CPackConfig.cmake" -B "$BUILD_DIR/package" >/dev/null
rm -rf "$BUILD_DIR/package/_CPack_Packages"
ls "$BUILD_DIR"/package/*.deb
if [ "${1:-}" != "--no-lintian" ]; then
  # Errors fail the script; warnings and notes are printed for a person to weigh.
  lintian --fail-on error "$BUILD_DIR"/package/*.deb
fi

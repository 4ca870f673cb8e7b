#!/usr/bin/env bash
# The torch-free side (lite::core, lite::cache, their unit tests, the fuzz corpus replays) built with
# AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/, then its tests run. Any sanitizer report fails
# the run (-fno-sanitize-recover=all). scripts/test.sh (the CI test command) runs this after the main suite.
# The torch side is not built here: LibTorch itself is not sanitizer-built, and its build would take hours on
# the CI machine.
# Usage: scripts/sanitize.sh [extra ctest args]; LITE_ASAN_BUILD_DIR overrides build-asan, CXX the compiler
# (default g++; clang++-14 works too).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${LITE_ASAN_BUILD_DIR:-build-asan}
# float-cast-overflow is part of clang's -fsanitize=undefined but not gcc's: a double too large for the integer
# it is converted to (a size, a count) is exactly the bug class the parsers must not have.
FLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLITE_WITH_TORCH=OFF \
    -DCMAKE_CXX_COMPILER="${CXX:-g++}" -DCMAKE_CXX_FLAGS="$FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
echo "sanitize.sh: ASan+UBSan build of the torch-free targets: all tests passed"

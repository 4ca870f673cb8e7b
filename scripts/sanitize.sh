#!/usr/bin/env bash
# The torch-free side (lite::core, lite::cache, their unit tests, the fuzz corpus replays) built with
# AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/, then its tests run. Any sanitizer report fails
# the run (-fno-sanitize-recover=all). scripts/test.sh (the CI test command) runs this after the main suite.
# The torch side is not built here: LibTorch itself is not sanitizer-built, and its build would take hours on
# the CI machine.
# Usage: scripts/sanitize.sh [extra ctest args]; LITE_ASAN_BUILD_DIR overrides build-asan, CXX the compiler
# (default g++; clang++-14 works too).
#
# scripts/sanitize.sh --torch [extra ctest args]: the torch side instead. lite's own code (lite::model, profile,
# quantize, prune, distill and the torch unit tests) is built with ASan+UBSan into build-asan-torch/ and the
# torch unit tests run (torch/, prune/, distill/); LibTorch stays the uninstrumented Debian build, which ASan's
# malloc interposition covers for heap errors in our code. Long (a clean build is about 40 CPU-minutes of
# compiling, the tests about 10 minutes), so CI does not run it; run it before a release and after changes to
# tensor or buffer handling. What it needs from the environment, and why:
#   - LSan suppressions (scripts/sanitize-torch.supp): libtorch and its dependencies keep global allocations
#     (operator registries, thread pools, the JIT's caches) alive until exit, which LSan reports as leaks; a
#     leak allocated through those libraries is suppressed (see the file for what that hides), one allocated
#     by lite's own code is reported.
#   - UBSan's vptr check is off (-fno-sanitize=vptr): it needs type information for every class it sees, and
#     libtorch's classes come from an uninstrumented library, which makes it report false dynamic-type errors.
#   - ASAN_OPTIONS detect_odr_violation=0: libtorch's shared libraries define a few globals twice (protobuf,
#     c10 registries), which ASan flags at load time before any of our code runs.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH=0
if [ "${1:-}" = "--torch" ]; then TORCH=1; shift; fi
BUILD_DIR=${LITE_ASAN_BUILD_DIR:-build-asan}
# float-cast-overflow is part of clang's -fsanitize=undefined but not gcc's: a double too large for the integer
# it is converted to (a size, a count) is exactly the bug class the parsers must not have.
FLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer"

if [ "$TORCH" = 1 ]; then
  BUILD_DIR=${LITE_ASAN_TORCH_BUILD_DIR:-build-asan-torch}
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    # -O1: sanitizer reports keep their line numbers and the torch-heavy sources compile faster than at -O2.
    # -DNDEBUG as libtorch was built: its headers add members under #ifndef NDEBUG (RecordFunction's
    # inputs_valid_), and without it lite's view of those classes differs from the library's (UBSan then
    # reports invalid bool loads in ATen/record_function.h, an ABI mismatch and not a libtorch bug).
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
      -DLITE_BUILD_APPS=OFF -DCMAKE_CXX_COMPILER="${CXX:-g++}" -DCMAKE_CXX_FLAGS="$FLAGS -fno-sanitize=vptr" \
      ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  fi
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target lite_torch_tests lite_prune_tests lite_distill_tests
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_odr_violation=0:strict_string_checks=1}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/sanitize-torch.supp:print_suppressions=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" -R '^(torch|prune|distill)/' "$@"
  echo "sanitize.sh --torch: ASan+UBSan build of lite's torch-side code: all torch unit tests passed"
  exit 0
fi
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

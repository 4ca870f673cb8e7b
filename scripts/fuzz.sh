#!/usr/bin/env bash
# Fuzzes one of lite's parsers with libFuzzer: builds tests/fuzz/fuzz_TARGET.cpp with clang-14
# -fsanitize=fuzzer,address,undefined into build-fuzz/ (lite::core and lite::cache instrumented too, torch-free)
# and runs it for SECONDS, starting from the seed corpus tests/fuzz/corpus/TARGET/.
#   scripts/fuzz.sh list              the targets
#   scripts/fuzz.sh TARGET SECONDS    fuzz one (e.g. scripts/fuzz.sh trace_csv 600)
#   scripts/fuzz.sh all SECONDS       fuzz each in turn
# New interesting inputs go to build-fuzz/corpus/TARGET/ (the seeds are never modified); a crash is written to
# build-fuzz/crashes/TARGET/ and the run fails. Once fixed, copy the crashing input into
# tests/fuzz/corpus/TARGET/: the normal ctest suite replays every corpus file (test fuzz/TARGET).
# Extra libFuzzer flags: LITE_FUZZ_ARGS (e.g. "-jobs=2 -workers=2"). Installs clang-14 and libclang-rt-14-dev
# (Debian) with apt-get when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${LITE_FUZZ_BUILD_DIR:-build-fuzz}
targets() { ls tests/fuzz/corpus; }
usage() { echo "usage: scripts/fuzz.sh TARGET|all SECONDS, or scripts/fuzz.sh list; targets: $(targets | tr '\n' ' ')" >&2; exit 2; }

[ $# -ge 1 ] || usage
if [ "$1" = list ]; then targets; exit 0; fi
[ $# -eq 2 ] || usage
TARGET=$1
SECONDS_TO_RUN=$2
[[ "$SECONDS_TO_RUN" =~ ^[0-9]+$ ]] && [ "$SECONDS_TO_RUN" -ge 1 ] || { echo "fuzz.sh: SECONDS: '$SECONDS_TO_RUN' is not a whole number >= 1" >&2; exit 2; }
if [ "$TARGET" != all ] && [ ! -d "tests/fuzz/corpus/$TARGET" ]; then
  echo "fuzz.sh: TARGET: unknown target '$TARGET'; known: $(targets | tr '\n' ' ')" >&2
  exit 2
fi

if ! command -v clang++-14 >/dev/null || ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz.sh: installing clang-14 and libclang-rt-14-dev" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-14 libclang-rt-14-dev >/dev/null
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLITE_WITH_TORCH=OFF -DLITE_FUZZ=ON \
    -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi

fuzz_one() {
  local target=$1
  cmake --build "$BUILD_DIR" --target "fuzz_$target" -j "$(nproc)"
  mkdir -p "$BUILD_DIR/corpus/$target" "$BUILD_DIR/crashes/$target"
  echo "fuzz.sh: fuzzing $target for $SECONDS_TO_RUN s" >&2
  # shellcheck disable=SC2086
  if ! "$BUILD_DIR/tests/fuzz/fuzz_$target" "$BUILD_DIR/corpus/$target" "tests/fuzz/corpus/$target" \
      -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
      -artifact_prefix="$BUILD_DIR/crashes/$target/" ${LITE_FUZZ_ARGS:-}; then
    echo "fuzz.sh: $target crashed; the input is in $BUILD_DIR/crashes/$target/ (replay: $BUILD_DIR/tests/fuzz/fuzz_$target FILE)." >&2
    echo "fuzz.sh: after the fix, copy it into tests/fuzz/corpus/$target/ so the normal suite replays it." >&2
    return 1
  fi
}

if [ "$TARGET" = all ]; then
  for t in $(targets); do fuzz_one "$t"; done
else
  fuzz_one "$TARGET"
fi

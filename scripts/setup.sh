#!/usr/bin/env bash
# Installs everything lite needs from Debian packages. Idempotent: when all packages are present it
# only checks them (about a second). Needs root or sudo for the first run on a fresh machine.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libtorch-dev libopenblas0-pthread          # LibTorch (CPU) and a fast BLAS for it (the system default)
  libopenblas0-openmp                        # the BLAS lite-torch loads: shares libgomp's threads
  libgloo-dev                                # Gloo, for lite distill's data parallelism (c10d)
  libopenmpi-dev openmpi-bin                 # lite-mpi: cache-sim sweeps over MPI ranks (optional at build time)
  libcli11-dev nlohmann-json3-dev libfmt-dev doctest-dev
  zlib1g-dev libzstd-dev zstd                # .gz idx files, .zst traces
  dataset-fashion-mnist                      # the bundled model's data set
  universal-ctags                            # the function-length house check (tests)
  lintian                                    # the Debian package check (tests/install/check_deb.sh)
  zsh fish                                   # the generated completions' tests
  iproute2                                   # ip netns: the cross-host tests' hosts (tests/cli/netns_hosts.py)
  faketime                                   # a host whose wall clock is days off (test_two_hosts.py)
  python3-torch python3-torchvision python3-numpy  # interop tests and fixture scripts only
  fortunes                                   # English text the LLM bench trains its byte-level decoder on
  libtcmalloc-minimal4                       # benchmarks time on glibc malloc and on tcmalloc
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Debian's libtorch calls the system BLAS; without OpenBLAS selected, fp32 matmul runs on the
# reference BLAS (~40x slower) and every latency figure is meaningless.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
case "$blas" in
  *openblas*) ;;
  *) echo "setup: warning: libblas.so.3 resolves to '$blas', not OpenBLAS; run" \
          "'update-alternatives --config libblas.so.3-x86_64-linux-gnu'" >&2 ;;
esac

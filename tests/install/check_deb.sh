#!/usr/bin/env bash
# The Debian packages as a user meets them: CPack builds lite and lite-dev from this build, lintian finds no error
# in either, dpkg installs both into a fresh root (a scratch folder with its own dpkg database; the run-time
# libraries it depends on come from this machine's packages, hence --force-depends), and the installed lite answers
# --version, sizes a cache on the bundled trace and profiles the bundled model, with its man pages and completions
# where man, bash, zsh and fish look. Usage: check_deb.sh BUILD_DIR
set -euo pipefail
build_dir=$(cd "$1" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "check_deb: $*" >&2; exit 1; }

cpack --config "$build_dir/CPackConfig.cmake" -B "$scratch/package" >"$scratch/cpack.log" 2>&1 ||
  { cat "$scratch/cpack.log"; fail "cpack failed"; }
debs=("$scratch"/package/lite_*.deb "$scratch"/package/lite-dev_*.deb "$scratch"/package/lite-mpi_*.deb)
for deb in "${debs[@]}"; do [ -f "$deb" ] || fail "no package $deb"; done
dpkg-deb --field "${debs[0]}" Depends | grep -q libtorch || fail "lite does not depend on libtorch"
dpkg-deb --field "${debs[0]}" Depends | grep -q libopenblas || fail "lite does not depend on OpenBLAS"

command -v lintian >/dev/null || fail "lintian is not installed (scripts/setup.sh installs it)"
lintian --fail-on error "${debs[@]}" ||
  fail "lintian found errors in the packages (above)"

root=$scratch/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-not-root --log=/dev/null -i "${debs[@]}" >"$scratch/dpkg.log" 2>&1 ||
  { cat "$scratch/dpkg.log"; fail "dpkg -i into a fresh root failed"; }

for f in usr/bin/lite usr/libexec/lite/lite-torch usr/libexec/lite/lite-mpi usr/share/man/man1/lite.1.gz usr/share/man/man1/lite-cache-sim.1.gz \
         usr/share/bash-completion/completions/lite usr/share/zsh/vendor-completions/_lite \
         usr/share/fish/vendor_completions.d/lite.fish usr/share/doc/lite/copyright usr/share/doc/lite-dev/copyright \
         usr/share/lite/data/fmnist_cnn.pt usr/share/lite/data/inference_requests.csv \
         usr/lib/cmake/lite/liteConfig.cmake usr/include/lite/core/error.hpp; do
  [ -e "$root/$f" ] || fail "the installed packages lack /$f"
done

lite=$root/usr/bin/lite
"$lite" --version | tee "$scratch/version.txt"
grep -q "^quantized engines: " "$scratch/version.txt" || fail "--version of the installed lite did not reach lite-torch"
"$lite" cache-sim "$root/usr/share/lite/data/inference_requests.csv" --policy lru --sizes 10% --json >"$scratch/cache.json"
grep -q '"miss_ratio"' "$scratch/cache.json" || fail "cache-sim from the package gave no miss ratio"
"$lite" profile "$root/usr/share/lite/data/fmnist_cnn.pt" --iterations 20 --warmup 2 --json >"$scratch/profile.json"
grep -q '"p50"' "$scratch/profile.json" || fail "profile from the package gave no p50"
echo "check_deb: the packages install into a fresh root and run"

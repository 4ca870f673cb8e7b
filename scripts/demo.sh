#!/usr/bin/env bash
# The main job on the bundled defaults, from a fresh machine: install, build, then profile the bundled
# Fashion-MNIST model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
LITE=${LITE_BUILD_DIR:-build}/apps/lite
echo "== lite profile data/fmnist_cnn.pt"
"$LITE" profile data/fmnist_cnn.pt --eval data/fmnist_eval.pt

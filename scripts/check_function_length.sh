#!/usr/bin/env bash
# House rule: no function in lib/ or apps/ over LIMIT lines (default 80), so each one does one job that a
# reader can hold in view. Uses Universal Ctags (function start and end lines), which scripts/setup.sh installs;
# exit 1 when it is not installed (never a skip, which would let the rule lapse unseen) or with the offenders
# listed, 0 otherwise.
# Usage: scripts/check_function_length.sh [LIMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-80}
ctags=$(command -v ctags-universal || command -v ctags || true)
if [ -z "$ctags" ] || ! "$ctags" --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "check_function_length: Universal Ctags not installed; run scripts/setup.sh (it installs universal-ctags)" >&2
  exit 1
fi
long=$("$ctags" -R --languages=C++ --kinds-C++=f --fields=+ne -x --_xformat="%{end} %{line} %N %F" lib apps |
  awk -v limit="$limit" '$1 != "" && $1 - $2 + 1 > limit { printf "  %s:%s %s: %d lines\n", $4, $2, $3, $1 - $2 + 1 }')
if [ -n "$long" ]; then
  echo "functions over $limit lines (split them by job):"
  echo "$long"
  exit 1
fi
echo "check_function_length: every function in lib/ and apps/ is at most $limit lines"

#!/usr/bin/env bash
# House rule: no doctest TEST_CASE name holds ';'. ctest's discovery (doctest_discover_tests) splits a name
# there, so the registered test filters on a prefix that matches no case: it runs nothing and reports a pass.
# Exit 1 with the offenders listed, 0 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(grep -rn 'TEST_CASE("[^"]*;' tests || true)
if [ -n "$bad" ]; then
  echo "test case names with ';' (ctest would run nothing for them; use ',' instead):"
  echo "$bad"
  exit 1
fi

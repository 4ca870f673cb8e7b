#!/usr/bin/env bash
# House rule: lib/ and apps/ prefetch only through lite::cache::detail::prefetch_line (lib/lite/cache/prefetch.hpp).
# A bare __builtin_prefetch in a function that only prefetches is deleted by GCC as dead code (it counts the builtin
# as free of side effects), silently: the object table's victim and link prefetches were compiled out that way.
# Exit 1 with the offenders listed, 0 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(grep -rn '__builtin_prefetch' lib apps | grep -v '^lib/lite/cache/prefetch.hpp:' || true)
if [ -n "$bad" ]; then
  echo "bare __builtin_prefetch (use prefetch_line from lib/lite/cache/prefetch.hpp, which GCC cannot delete):"
  echo "$bad"
  exit 1
fi

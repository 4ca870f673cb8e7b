#pragma once
// The exact tail-first LRU curve over every capacity from one pass of stack distances. Tail-first LRU is a stack
// algorithm: after a request the stack holds its blocks head first on top, the rest in their old order, and a
// capacity of C blocks holds the top C. So block j of a request is cached at capacity C iff its stack distance at
// the request's start is at most C, and the request's first k blocks hit iff the largest of their first k
// distances is at most C. Internal to the prefix mode.
#include <vector>

#include "lite/cache/prefix/block_trace.hpp"

namespace lite::cache::prefix {

// Hit tokens and blocks at each capacity of `capacities` (blocks, ascending), and at a log-spaced grid for the
// plot when `grid` > 0 (the capacities of the returned curve are the union, ascending).
PrefixCurve tail_first_lru_curve(const BlockTrace& t, const std::vector<uint64_t>& capacities, size_t grid = 0);

}  // namespace lite::cache::prefix

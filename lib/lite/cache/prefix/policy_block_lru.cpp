// lru: one recency list over blocks. A request's blocks are used tail first, so its head ends most recent and
// its tail goes first (vLLM's free queue takes a finished request's blocks in reverse order). Any block may be
// evicted, an interior one too, which leaves its cached descendants orphaned. Tail-first LRU is a stack
// algorithm: prefix_mrc.cpp gives its curve over every capacity in one pass.
#include "lite/cache/prefix/block_list.hpp"

namespace lite::cache::prefix {

std::unique_ptr<BlockCache> make_block_lru(const CacheSetup& s) { return std::make_unique<BlockQueue<true>>(s); }

}  // namespace lite::cache::prefix

// fifo: blocks leave in the order they came in; a hit does not move a block. A request's new blocks come in tail
// first, so its head leaves last. Any block may be evicted (orphans possible).
#include "lite/cache/prefix/block_list.hpp"

namespace lite::cache::prefix {

std::unique_ptr<BlockCache> make_block_fifo(const CacheSetup& s) { return std::make_unique<BlockQueue<false>>(s); }

}  // namespace lite::cache::prefix

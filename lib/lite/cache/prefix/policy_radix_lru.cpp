// radix-lru: SGLang's RadixCache eviction (radix_cache.py evict(): a heap of leaves by last_access_time). Every
// block of a request is stamped with the request's time; among leaves of one time the deeper goes first.
// No heap is needed for that order: a request stamps its whole path, so a cached block's key always exceeds its
// cached children's, and the block with the smallest key of all is a leaf. A recency list with each request's
// path at the front, head first, holds every block in key order, and its back is the next victim: O(1) a block
// reference where a heap of leaves costs a sift through scattered keys. The back is the locked block (the one
// being extended) only when nothing but the request's own path is cached; then, as with the heap, nothing goes
// and the rest of the prompt is not cached. test_prefix.cpp checks it against RadixCache with the same keys.
#include "lite/cache/prefix/block_list.hpp"

namespace lite::cache::prefix {
namespace {

class RadixLru final : public ListedBlocks {  // order_: every cached block, the smallest key at the back
 public:
  explicit RadixLru(const CacheSetup& s) : ListedBlocks(s) {}

  uint32_t serve(size_t r) override {
    const uint32_t k = cached_prefix(trace_, r, [this](uint32_t b) { return in_[b] != 0; });
    const uint32_t* blocks = trace_.blocks_of(r);
    for (uint32_t i = 0; i < k; ++i) order_.move_after(i ? blocks[i - 1] : kNoBlock, blocks[i]);
    const uint32_t n = trace_.block_count(r);
    for (uint32_t i = k; i < n; ++i) {
      const uint32_t parent = i ? blocks[i - 1] : kNoBlock;
      if (occupied_ == capacity_ && !evict_oldest(parent)) break;
      admit(blocks[i]);
      order_.insert_after(parent, blocks[i]);
    }
    return k;
  }

 private:
  bool evict_oldest(uint32_t locked) {
    const uint32_t victim = order_.tail();
    if (victim == kNoBlock || victim == locked) return false;
    evict_back();
    return true;
  }
};

}  // namespace

std::unique_ptr<BlockCache> make_radix_lru(const CacheSetup& s) { return std::make_unique<RadixLru>(s); }

}  // namespace lite::cache::prefix

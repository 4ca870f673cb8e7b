// lru: one recency list over blocks. A request's blocks are used tail first, so its head ends most recent and
// its tail goes first (vLLM's free queue takes a finished request's blocks in reverse order). Any block may be
// evicted, an interior one too, which leaves its cached descendants orphaned. Tail-first LRU is a stack
// algorithm: prefix_mrc.cpp gives its curve over every capacity in one pass.
#include "lite/cache/prefix/block_cache.hpp"
#include "lite/cache/prefix/block_list.hpp"

namespace lite::cache::prefix {
namespace {

class BlockLru final : public BlockCache {
 public:
  explicit BlockLru(const CacheSetup& s)
      : trace_(*s.trace), capacity_(s.capacity_blocks), in_(trace_.blocks(), 0), order_(trace_.blocks()) {}

  uint32_t serve(size_t r) override {
    const uint32_t k = cached_prefix(trace_, r, [this](uint32_t b) { return in_[b] != 0; });
    const uint32_t* blocks = trace_.blocks_of(r);
    for (uint32_t i = trace_.block_count(r); i-- > 0;) {
      const uint32_t b = blocks[i];
      if (in_[b]) {
        order_.move_to_front(b);
        continue;
      }
      in_[b] = 1;
      order_.push_front(b);
      if (++occupied_ > capacity_) {
        const uint32_t victim = order_.tail();
        order_.remove(victim);
        in_[victim] = 0;
        --occupied_;
      }
    }
    return k;
  }
  bool cached(uint32_t b) const override { return in_[b] != 0; }
  uint64_t occupied() const override { return occupied_; }

 private:
  const BlockTrace& trace_;
  uint64_t capacity_, occupied_ = 0;
  std::vector<uint8_t> in_;
  BlockList order_;
};

}  // namespace

std::unique_ptr<BlockCache> make_block_lru(const CacheSetup& s) { return std::make_unique<BlockLru>(s); }

}  // namespace lite::cache::prefix

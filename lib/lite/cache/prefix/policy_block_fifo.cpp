// fifo: blocks leave in the order they came in; a hit does not move a block. A request's new blocks come in tail
// first, so its head leaves last. Any block may be evicted (orphans possible).
#include "lite/cache/prefix/block_cache.hpp"
#include "lite/cache/prefix/block_list.hpp"

namespace lite::cache::prefix {
namespace {

class BlockFifo final : public BlockCache {
 public:
  explicit BlockFifo(const CacheSetup& s)
      : trace_(*s.trace), capacity_(s.capacity_blocks), in_(trace_.blocks(), 0), order_(trace_.blocks()) {}

  uint32_t serve(size_t r) override {
    const uint32_t k = cached_prefix(trace_, r, [this](uint32_t b) { return in_[b] != 0; });
    const uint32_t* blocks = trace_.blocks_of(r);
    for (uint32_t i = trace_.block_count(r); i-- > 0;) {
      const uint32_t b = blocks[i];
      if (in_[b]) continue;
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

std::unique_ptr<BlockCache> make_block_fifo(const CacheSetup& s) { return std::make_unique<BlockFifo>(s); }

}  // namespace lite::cache::prefix

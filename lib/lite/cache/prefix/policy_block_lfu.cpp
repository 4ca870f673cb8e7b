// lfu: evicts the block used by the fewest requests, the least recently used among equals (tail-first use within
// a request, so a request's tail goes before its head). Any block may be evicted (orphans possible). The count
// survives only while the block is cached, as in libCacheSim's LFU.
#include "lite/cache/prefix/block_cache.hpp"
#include "lite/cache/prefix/indexed_heap.hpp"

namespace lite::cache::prefix {
namespace {

class BlockLfu final : public BlockCache {
 public:
  explicit BlockLfu(const CacheSetup& s)
      : trace_(*s.trace),
        capacity_(s.capacity_blocks),
        uses_(trace_.blocks(), 0),
        heap_(trace_.blocks()),
        evicted_(s.evicted) {}

  uint32_t serve(size_t r) override {
    const uint32_t k = cached_prefix(trace_, r, [this](uint32_t b) { return heap_.contains(b); });
    const uint32_t* blocks = trace_.blocks_of(r);
    for (uint32_t i = trace_.block_count(r); i-- > 0;) {
      const uint32_t b = blocks[i];
      if (heap_.contains(b)) {
        heap_.set_key(b, {double(++uses_[b]), ++clock_});
        continue;
      }
      if (occupied_ == capacity_) {  // room first, as libCacheSim's cache_get: the new block is never the victim
        const uint32_t victim = heap_.top();
        heap_.remove(victim);
        --occupied_;
        if (evicted_) evicted_->push_back(victim);
      }
      uses_[b] = 1;
      heap_.set_key(b, {1.0, ++clock_});
      heap_.push(b);
      ++occupied_;
    }
    return k;
  }
  bool cached(uint32_t b) const override { return heap_.contains(b); }
  uint64_t occupied() const override { return occupied_; }

 private:
  const BlockTrace& trace_;
  uint64_t capacity_, occupied_ = 0, clock_ = 0;
  std::vector<uint32_t> uses_;
  IndexedHeap heap_;
  std::vector<uint32_t>* evicted_;
};

}  // namespace

std::unique_ptr<BlockCache> make_block_lfu(const CacheSetup& s) { return std::make_unique<BlockLfu>(s); }

}  // namespace lite::cache::prefix

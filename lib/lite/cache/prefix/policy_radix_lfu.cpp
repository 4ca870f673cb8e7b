// radix-lfu: leaves only, the one used by the fewest requests first, the least recently used among equals (the
// count is kept while the block is cached). SGLang ships an LFU eviction policy for its radix tree too.
#include "lite/cache/prefix/radix_cache.hpp"

namespace lite::cache::prefix {
namespace {

struct UseCount {
  explicit UseCount(const CacheSetup& s) : uses(s.trace->blocks(), 0) {}
  HeapKey use(uint32_t block, uint32_t, uint64_t, size_t request) {
    return {double(++uses[block]), uint64_t(request)};
  }
  void evicted(uint32_t block, const HeapKey&) { uses[block] = 0; }  // counted again from its next caching
  std::vector<uint32_t> uses;
};

}  // namespace

std::unique_ptr<BlockCache> make_radix_lfu(const CacheSetup& s) { return std::make_unique<RadixCache<UseCount>>(s); }

}  // namespace lite::cache::prefix

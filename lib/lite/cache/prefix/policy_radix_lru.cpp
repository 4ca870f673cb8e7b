// radix-lru: SGLang's RadixCache eviction (radix_cache.py evict(): a heap of leaves by last_access_time). Every
// block of a request is stamped with the request's time; among leaves of one time the deeper goes first.
#include "lite/cache/prefix/radix_cache.hpp"

namespace lite::cache::prefix {
namespace {

struct LastUse {
  explicit LastUse(const CacheSetup&) {}
  HeapKey use(uint32_t, uint32_t depth, uint64_t, size_t request) {
    return {double(request), UINT32_MAX - uint64_t(depth)};
  }
  void evicted(uint32_t, const HeapKey&) {}
};

}  // namespace

std::unique_ptr<BlockCache> make_radix_lru(const CacheSetup& s) { return std::make_unique<RadixCache<LastUse>>(s); }

}  // namespace lite::cache::prefix

// radix-reference: an offline reference, not a proven optimum: leaves only, the leaf whose next use is farthest
// in the future goes first (Belady's rule restricted to leaves; with prefix hits and whole-request insertion
// Belady's optimality proof does not carry over). It reads each reference's next use from the trace.
#include "lite/cache/prefix/radix_cache.hpp"

namespace lite::cache::prefix {
namespace {

struct FarthestNextUse {
  explicit FarthestNextUse(const CacheSetup& s) : next_use(*s.next_use) {}
  HeapKey use(uint32_t, uint32_t depth, uint64_t ref, size_t) {
    // farthest first: the smallest key is the largest next use; never-again (UINT32_MAX) before any
    return {-double(next_use[ref]), UINT32_MAX - uint64_t(depth)};
  }
  void evicted(uint32_t, const HeapKey&) {}
  const std::vector<uint32_t>& next_use;
};

}  // namespace

std::unique_ptr<BlockCache> make_radix_reference(const CacheSetup& s) {
  return std::make_unique<RadixCache<FarthestNextUse>>(s);
}

}  // namespace lite::cache::prefix

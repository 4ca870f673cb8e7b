// radix-cost: leaves only, weighed by the prefill they save, GreedyDual-Size-Frequency style (policy_gdsf.cpp):
// key = L + uses x cost(depth), L rising to each victim's key so old favourites age out. A block at depth d
// saves the prefill of its block_tokens tokens, whose attention reads the d blocks before it:
// cost(d) = T x (1 + attention x (d x T + T / 2)), attention = c / b of the prefill model (default 1/32768:
// attention's share matches the linear layers' at about 32K tokens of context, a 70B-class model's order).
#include "lite/cache/prefix/radix_cache.hpp"

namespace lite::cache::prefix {
namespace {

struct SavedPrefill {
  explicit SavedPrefill(const CacheSetup& s)
      : uses(s.trace->blocks(), 0), tokens(double(s.trace->block_tokens)), attention(s.attention_per_token) {}
  HeapKey use(uint32_t block, uint32_t depth, uint64_t, size_t request) {
    const double cost = tokens * (1 + attention * (double(depth) * tokens + tokens / 2));
    return {inflation + double(++uses[block]) * cost, uint64_t(request)};
  }
  void evicted(uint32_t block, const HeapKey& key) {
    uses[block] = 0;
    inflation = key.primary;
  }
  std::vector<uint32_t> uses;
  double tokens, attention, inflation = 0;
};

}  // namespace

std::unique_ptr<BlockCache> make_radix_cost(const CacheSetup& s) { return std::make_unique<RadixCache<SavedPrefill>>(s); }

}  // namespace lite::cache::prefix

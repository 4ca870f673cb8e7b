// TieredCache: the policy's cache as the first tier, demotion down the lower ones (tiered_cache.hpp).
#include "lite/cache/prefix/tiered_cache.hpp"

namespace lite::cache::prefix {

TieredCache::TieredCache(const PrefixPolicyEntry& policy, CacheSetup setup, const std::vector<Tier>& tiers)
    : trace_(*setup.trace), lower_(trace_.blocks(), 0) {
  setup.capacity_blocks = tiers.front().capacity_blocks;
  setup.evicted = &evicted_;
  first_ = policy.make(setup);
  for (const Tier& t : tiers) {
    capacity_.push_back(t.capacity_blocks);
    occupied_.push_back(0);
    lists_.emplace_back(&t == &tiers.front() ? 0 : trace_.blocks());
  }
}

uint64_t TieredCache::occupied() const {
  uint64_t n = first_->occupied();
  for (size_t t = 1; t < occupied_.size(); ++t) n += occupied_[t];
  return n;
}

void TieredCache::leave_lower_tier(uint32_t b) {
  const uint8_t t = lower_[b];
  lists_[t].remove(b);
  --occupied_[t];
  lower_[b] = 0;
}

void TieredCache::demote(uint32_t b) {
  // a block the first tier took from a lower one and evicted again in the same request, or evicted twice, was
  // still used last: it enters the next tier at the front, as one LRU over all tiers would keep it
  if (lower_[b]) leave_lower_tier(b);
  for (size_t t = 1; t < lists_.size() && lower_[b] == 0; ++t) {
    lower_[b] = uint8_t(t);
    lists_[t].push_front(b);
    if (++occupied_[t] <= capacity_[t]) return;
    const uint32_t victim = lists_[t].tail();
    leave_lower_tier(victim);
    b = victim;  // on down to the next tier, or dropped after the last
  }
}

uint32_t TieredCache::serve(size_t r) {
  const uint32_t* blocks = trace_.blocks_of(r);
  const uint32_t n = trace_.block_count(r);
  prefix_tiers_.clear();
  for (uint32_t i = 0; i < n; ++i) {
    const int t = tier_of(blocks[i]);
    if (t < 0) break;
    prefix_tiers_.push_back(uint8_t(t));
  }
  evicted_.clear();
  first_->serve(r);
  for (uint32_t i = 0; i < n; ++i)  // what the first tier took leaves the lower ones: tiers are exclusive
    if (lower_[blocks[i]] && first_->cached(blocks[i])) leave_lower_tier(blocks[i]);
  for (const uint32_t v : evicted_)
    if (!first_->cached(v)) demote(v);
  return uint32_t(prefix_tiers_.size());
}

PrefixLoad choose_prefix_load(const BlockTrace& t, size_t r, const std::vector<uint8_t>& prefix_tiers,
                              const std::vector<Tier>& tiers, const std::optional<PrefillModel>& prefill) {
  const uint64_t input = t.input_tokens[r];
  PrefixLoad best;
  double best_ms = prefill ? prefill->ms(0, input) : 0;
  double load_ms = 0;
  for (uint32_t j = 1; j <= prefix_tiers.size(); ++j) {
    const uint64_t hit = t.hit_tokens(r, j);
    load_ms += double(hit - t.hit_tokens(r, j - 1)) * tiers[prefix_tiers[j - 1]].load_ms_per_token;
    const double ms = prefill ? load_ms + prefill->ms(hit, input - hit) : 0;
    if (ms <= best_ms) {
      best_ms = ms;
      best = {j, load_ms};
    }
  }
  return best;
}

}  // namespace lite::cache::prefix

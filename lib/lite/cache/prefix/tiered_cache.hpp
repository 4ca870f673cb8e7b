#pragma once
// A cache of KV tiers (tiers.hpp): the first tier is the policy's own cache, each lower tier a list of the blocks
// demoted into it, the most recently demoted first. Tiers are exclusive: a block is in at most one. A request
// uses its blocks in the first tier (a cached block in a lower tier moves up, as a hit is loaded into HBM to be
// used), the first tier's victims move down one tier, and a full lower tier passes its least recently demoted
// block on down; the last tier's victims are dropped. Internal to the prefix mode.
#include <memory>
#include <optional>
#include <vector>

#include "lite/cache/prefix/block_cache.hpp"
#include "lite/cache/prefix/block_list.hpp"
#include "lite/cache/prefix/tiers.hpp"

namespace lite::cache::prefix {

class TieredCache final : public BlockCache {
 public:
  TieredCache(const PrefixPolicyEntry& policy, CacheSetup setup, const std::vector<Tier>& tiers);

  // The longest prefix cached in any tier; prefix_tiers() then says where each of its blocks was.
  uint32_t serve(size_t r) override;
  bool cached(uint32_t b) const override { return first_->cached(b) || lower_[b] != 0; }
  uint64_t occupied() const override;
  // The tier (0: the first) that held each block of the last request's cached prefix at its start.
  const std::vector<uint8_t>& prefix_tiers() const { return prefix_tiers_; }
  // The tier holding a block now, or -1.
  int tier_of(uint32_t b) const { return first_->cached(b) ? 0 : lower_[b] ? int(lower_[b]) : -1; }

 private:
  void demote(uint32_t block);
  void leave_lower_tier(uint32_t block);

  const BlockTrace& trace_;
  std::vector<uint32_t> evicted_;  // the first tier's victims during one request
  std::unique_ptr<BlockCache> first_;
  std::vector<uint64_t> capacity_, occupied_;  // per tier; [0] unused (the policy's own)
  std::vector<BlockList> lists_;               // per tier; [0] unused
  std::vector<uint8_t> lower_;                 // per block: the lower tier holding it, 0 = none
  std::vector<uint8_t> prefix_tiers_;
};

// Of request r's cached prefix (prefix_tiers[i]: the tier of block i), how many leading blocks to load and what
// that takes. The rule issue 35 cites as Mooncake's Eq. 2, applied to every prefix length: load the leading j
// blocks for the j that minimises load time + prefill of the other prompt tokens (the largest such j on ties),
// so a block whose load takes longer than recomputing it is recomputed. Without a prefill model every cached
// block is loaded.
struct PrefixLoad {
  uint32_t blocks = 0;
  double load_ms = 0;
};
PrefixLoad choose_prefix_load(const BlockTrace& t, size_t r, const std::vector<uint8_t>& prefix_tiers,
                              const std::vector<Tier>& tiers, const std::optional<PrefillModel>& prefill);

}  // namespace lite::cache::prefix

#pragma once
// KV tiers (--tiers hbm=3Mtok@900GB/s,dram=50Mtok@50GB/s,ssd=1TB@5GB/s): storage levels fastest first, each a
// capacity (in --sizes' units) and the bandwidth a hit is loaded at. The first tier is the policy's cache; a
// block it evicts moves down to the next tier, and the last tier's victims are dropped. Internal to the prefix
// mode (docs/cache-sim.md "Tiers").
#include <optional>
#include <string>
#include <vector>

#include "lite/cache/prefix/capacity.hpp"

namespace lite::cache::prefix {

// One --tiers item as written.
struct TierSpec {
  std::string name;
  CapacitySpec capacity;
  std::optional<double> bytes_per_second;  // none: a hit there loads in no time (the KV is already in place)
};

// Parses --tiers: NAME=CAPACITY[@BANDWIDTH], comma-separated, fastest first; a bandwidth is bytes per second,
// "900GB/s" (decimal: 10^9) or "50GiB/s" (binary). OptionError("tiers").
std::vector<TierSpec> parse_tiers(const std::string& text);

// A tier resolved for one KV format: its capacity in blocks and the ms a token takes to load from it.
struct Tier {
  std::string name;
  uint64_t capacity_blocks = 0;
  std::optional<double> capacity_bytes;
  std::optional<double> bytes_per_second;
  double load_ms_per_token = 0;
};

// The tiers for one KV format (nullptr: none, then no capacity in bytes and no bandwidth). OptionError("tiers").
std::vector<Tier> resolve_tiers(const std::vector<TierSpec>& specs, const TraceFacts& trace, const KvFormat* kv);

}  // namespace lite::cache::prefix

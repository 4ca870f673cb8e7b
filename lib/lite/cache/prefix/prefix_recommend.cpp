// The smallest capacity meeting --target-hit-ratio (token hit ratio) or --target-ttft-p99, and the policy that
// does best there. Capacities compare in bytes when the study has KV formats (a lighter format holds more blocks
// in the same bytes), else in blocks.
#include <fmt/format.h>

#include <optional>

#include "lite/cache/prefix/prefix_run.hpp"

namespace lite::cache::prefix {

namespace {

double size_of(const PrefixRow& r) { return r.capacity_bytes ? *r.capacity_bytes : double(r.capacity_blocks); }

bool meets(const PrefixConfig& c, const PrefixRow& r) {
  if (c.target_hit_ratio) return r.token_hit_ratio() >= *c.target_hit_ratio;
  return r.ttft_p99_ms && *r.ttft_p99_ms <= *c.target_ttft_p99_ms;
}

// At equal size the better row: more hit tokens, or the lower TTFT p99 for a TTFT target.
bool better(const PrefixConfig& c, const PrefixRow& a, const PrefixRow& b) {
  if (c.target_ttft_p99_ms) return a.ttft_p99_ms.value_or(0) < b.ttft_p99_ms.value_or(0);
  return a.hit_tokens > b.hit_tokens;
}

}  // namespace

std::optional<PrefixRecommendation> recommend(const PrefixConfig& c, const std::vector<PrefixRow>& rows) {
  if (!c.target_hit_ratio && !c.target_ttft_p99_ms) return std::nullopt;
  PrefixRecommendation rec;
  rec.target = c.target_hit_ratio ? fmt::format("token hit ratio >= {}", *c.target_hit_ratio)
                                  : fmt::format("TTFT p99 <= {} ms", *c.target_ttft_p99_ms);
  for (const auto& r : rows) {
    if (!meets(c, r)) continue;
    if (!rec.row || size_of(r) < size_of(*rec.row) || (size_of(r) == size_of(*rec.row) && better(c, r, *rec.row)))
      rec.row = r;
  }
  rec.met = rec.row.has_value();
  return rec;
}

}  // namespace lite::cache::prefix

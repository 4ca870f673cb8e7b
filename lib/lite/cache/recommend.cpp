// recommend(): for each policy (x model variant), the first size in ascending order whose record
// meets the target: hit ratio >= target, or p99 latency <= target (the record's own cost model, or
// the variant's figures). The best is the smallest such size, ties broken by the lower miss ratio.
// Belady needs the future, so it is an offline bound: "best" only when nothing else was simulated.
// Cost-aware and cost-blind policies compete on equal terms: with --target-p99 the one whose misses
// cost less reaches the target at a smaller size and is picked.
#include "lite/cache/recommend.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lite/cache/policies.hpp"

namespace lite::cache {

bool meets_sizing_target(double hit_ratio, std::optional<double> p99_ms, const SimulationConfig& options) {
  if (options.target_hit_ratio) return hit_ratio >= *options.target_hit_ratio - 1e-12;
  return p99_ms && options.target_p99_ms && *p99_ms <= *options.target_p99_ms + 1e-12;
}

std::string sizing_target_text(const SimulationConfig& options) {
  return options.target_hit_ratio ? fmt::format("hit ratio >= {:g}", *options.target_hit_ratio)
                                  : fmt::format("p99 <= {:g} ms", *options.target_p99_ms);
}

std::vector<std::string> sizing_variants(const SimulationConfig& options) {
  std::vector<std::string> names;
  if (options.target_p99_ms)
    for (const auto& v : options.variants) names.push_back(v.label);
  if (names.empty()) names.emplace_back();
  return names;
}

namespace {

Recommendation first_meeting_target(const CacheSimResult& result, const SimulationConfig& opt, const PolicySpec& p,
                                    const std::string& variant) {
  Recommendation rec;
  rec.policy = p.label();
  rec.variant = variant;
  rec.offline_bound = find_policy(p.name).needs_next_access;
  for (const auto& r : result.records) {
    if (r.policy != rec.policy) continue;
    const std::optional<double> p99 = p99_of(r, variant);
    if (meets_sizing_target(1.0 - r.counters.miss_ratio(), p99, opt)) {
      rec.size = r.size;
      rec.miss_ratio = r.counters.miss_ratio();
      rec.p99_ms = p99;
      break;
    }
  }
  return rec;
}

// --policy none --mrc: the one-pass curve answers for LRU.
Recommendation from_curve(const MrcCurve& mrc, double target_hit_ratio) {
  Recommendation rec;
  rec.policy = "lru";
  if (mrc.smallest_size_for_target) {
    rec.size = mrc.smallest_size_for_target;
    rec.miss_ratio = 1.0 - target_hit_ratio;
    for (const auto& p : mrc.points)
      if (p.size == *rec.size) rec.miss_ratio = p.miss_ratio;
  }
  return rec;
}

}  // namespace

RecommendationSet recommend(const CacheSimResult& result, const SimulationConfig& opt) {
  RecommendationSet set;
  if (!opt.target_hit_ratio && !opt.target_p99_ms) return set;
  set.target = sizing_target_text(opt);
  for (const std::string& variant : sizing_variants(opt))
    for (const auto& p : opt.policies) set.per_policy.push_back(first_meeting_target(result, opt, p, variant));
  const bool only_oracles = std::all_of(set.per_policy.begin(), set.per_policy.end(),
                                        [](const Recommendation& r) { return r.offline_bound; });
  for (const auto& rec : set.per_policy) {
    if (!rec.size) continue;
    if (!only_oracles && rec.offline_bound) continue;
    if (!set.best || *rec.size < *set.best->size ||
        (*rec.size == *set.best->size && rec.miss_ratio < set.best->miss_ratio))
      set.best = rec;
  }
  if (opt.policies.empty() && result.mrc && opt.target_hit_ratio) {
    Recommendation rec = from_curve(*result.mrc, *opt.target_hit_ratio);
    if (rec.size) set.best = rec;
    set.per_policy.push_back(rec);
  }
  set.reached = set.best.has_value();
  return set;
}

}  // namespace lite::cache

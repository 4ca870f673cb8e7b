#pragma once
// recommend(): the smallest simulated size meeting a target, per policy (and per model variant with
// --miss-latency-from), and the best of them. Torch-free and pure: it reads the records of a result
// and the options' targets, so it is unit-tested on hand-made records.
#include <optional>
#include <string>
#include <vector>

#include "lite/cache/cache_sim.hpp"

namespace lite::cache {

// A record's p99 for model variant `variant` ("" = its one cost model), if it has one. Records of one cache
// (SimRecord) and of a cluster (ClusterRecord) alike.
template <class Record>
std::optional<double> p99_of(const Record& r, const std::string& variant) {
  if (variant.empty()) return r.latency ? std::optional<double>(r.latency->p99_ms) : std::nullopt;
  for (const auto& [label, figures] : r.variants)
    if (label == variant) return figures.p99_ms;
  return std::nullopt;
}

// Whether a hit ratio and p99 meet the sizing target of `options`: the hit ratio when a target hit ratio is given,
// else the p99 (with a 1e-12 slack, so a figure equal to the target meets it).
bool meets_sizing_target(double hit_ratio, std::optional<double> p99_ms, const SimulationConfig& options);

// The sizing target in words ("hit ratio >= 0.9" or "p99 <= 5 ms"), as both reports name it.
std::string sizing_target_text(const SimulationConfig& options);

// The latency variants a target is judged under, each a recommendation per policy: every --miss-latency-from
// variant for a p99 target that has them, else one "" (the record's own cost model).
std::vector<std::string> sizing_variants(const SimulationConfig& options);

// Needs options.target_hit_ratio or options.target_p99_ms; reads result.records (policy-major, sizes
// ascending) and result.mrc (for --policy none --mrc, where the one-pass curve answers for LRU).
RecommendationSet recommend(const CacheSimResult& result, const SimulationConfig& options);

}  // namespace lite::cache

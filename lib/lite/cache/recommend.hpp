#pragma once
// recommend(): the smallest simulated size meeting a target, per policy (and per model variant with
// --miss-latency-from), and the best of them. Torch-free and pure: it reads the records of a result
// and the options' targets, so it is unit-tested on hand-made records.
#include "lite/cache/cache_sim.hpp"

namespace lite::cache {

// Needs options.target_hit_ratio or options.target_p99_ms; reads result.records (policy-major, sizes
// ascending) and result.mrc (for --policy none --mrc, where the one-pass curve answers for LRU).
RecommendationSet recommend(const CacheSimResult& result, const SimulationConfig& options);

}  // namespace lite::cache

#pragma once
// The cache in front of each variant: the request trace replayed once through lite cache-sim for every policy
// and size, with each variant's measured latency (mean, p50, p99) paying for its misses (cache-sim's model
// variants), and per variant the smallest size of any policy at which the request latency meets the target.
// Torch-free.
#include <string>
#include <vector>

#include "lite/cache/options.hpp"
#include "lite/core/progress.hpp"
#include "lite/optimize/optimize.hpp"

namespace lite::optimize {

// cache-sim's options for the search's trace (the variants' latencies are added per run).
cache::CacheSimOptions cache_sim_options(const OptimizeOptions& o);
// cache-sim's rules over those options, its errors keyed by optimize's option names (policies -> cache_policies).
void validate_cache_options(const OptimizeOptions& o);

// Sets each variant's `cache` (all need a latency). One pass over the trace for all of them.
void fit_caches(const std::vector<Variant*>& variants, const OptimizeOptions& o, const Target& target,
                std::string& cache_unit, std::vector<std::string>& notes, Progress& progress);

// The fit of one variant from the simulated records: the smallest size (ties: lower figure) at which a policy's
// request latency for `label` meets the target. Exposed for tests.
CacheFit fit_from_records(const std::vector<cache::SimRecord>& records, const std::string& label, const Target& target);

}  // namespace lite::optimize

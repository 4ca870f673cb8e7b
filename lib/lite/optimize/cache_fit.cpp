// Sizing a cache in front of each variant of lite optimize (cache_fit.hpp).
#include "lite/optimize/cache_fit.hpp"

#include <fmt/format.h>

#include <limits>
#include <map>

#include "lite/cache/cache_sim.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"
#include "lite/optimize/objective.hpp"

namespace lite::optimize {

cache::CacheSimOptions cache_sim_options(const OptimizeOptions& o) {
  cache::CacheSimOptions c;
  c.trace = o.trace ? o.trace->string() : std::string();
  c.format = o.trace_format;
  c.policies = o.cache_policies;
  c.sizes = o.cache_sizes;
  c.bytes = !o.cache_objects;
  c.hit_latency_ms = o.hit_latency_ms.value_or(0);
  c.miss_latency_ms = 1.0;  // a stand-in for the rules; the variants' own latencies replace it
  c.threads = o.threads;
  return c;
}

void validate_cache_options(const OptimizeOptions& o) {
  static const std::map<std::string, std::string> our_key = {
      {"policies", "cache_policies"}, {"sizes", "cache_sizes"}, {"format", "trace_format"},
      {"bytes", "cache_objects"},     {"trace", "trace"},       {"hit_latency_ms", "hit_latency_ms"}};
  try {
    cache::validate(cache_sim_options(o));
  } catch (const OptionError& e) {
    auto it = our_key.find(e.key());
    const std::string key = it == our_key.end() ? "trace" : it->second;
    auto word = [&](const std::string& k) {
      auto found = our_key.find(k);
      return "{" + (found == our_key.end() ? k : found->second) + "}";
    };
    throw OptionError(key, render_option_refs(e.problem(), word), render_option_refs(e.fix(), word));
  }
}

CacheFit fit_from_records(const std::vector<cache::SimRecord>& records, const std::string& label, const Target& t) {
  CacheFit best;
  best.best_ms = std::numeric_limits<double>::infinity();
  uint64_t largest = 0;
  for (const auto& r : records) largest = std::max(largest, r.size);
  for (const auto& r : records) {
    for (const auto& [variant, figures] : r.variants) {
      if (variant != label) continue;
      const double figure = t.key == "target_p50_ms" ? figures.p50_ms : figures.p99_ms;
      if (r.size == largest) best.best_ms = std::min(best.best_ms, figure);
      if (figure > t.value) continue;
      const bool better = !best.reached || r.size < best.size ||
                          (r.size == best.size && figure < (t.key == "target_p50_ms" ? best.p50_ms : best.p99_ms));
      if (!better) continue;
      const double keep = best.best_ms;
      best = CacheFit{};
      best.best_ms = keep;
      best.reached = true;
      best.policy = r.policy;
      best.size = r.size;
      best.size_text = r.size_text;
      best.hit_ratio = 1.0 - r.counters.miss_ratio();
      best.mean_ms = figures.mean_ms;
      best.p50_ms = figures.p50_ms;
      best.p99_ms = figures.p99_ms;
    }
  }
  if (best.best_ms == std::numeric_limits<double>::infinity()) best.best_ms = 0;
  return best;
}

void fit_caches(const std::vector<Variant*>& variants, const OptimizeOptions& o, const Target& target,
                std::string& cache_unit, std::vector<std::string>& notes, Progress& progress) {
  if (variants.empty()) return;
  cache::CacheSimOptions c = cache_sim_options(o);
  c.miss_latency_ms.reset();
  cache::SimulationConfig config = cache::resolve(c);
  for (const Variant* v : variants)
    config.variants.push_back({v->spec.label(), v->artifact, v->latency->mean_ms, v->latency->p50_ms, v->latency->p99_ms});
  cache::check_resolved(config);
  const cache::CacheSimResult result = cache::simulate(config, progress);
  cache_unit = result.bytes ? "bytes" : "objects";
  for (Variant* v : variants) v->cache = fit_from_records(result.records, v->spec.label(), target);
  notes.push_back(fmt::format("cache: {} replayed ({} requests) through {} at {} sizes, each variant's measured "
                              "latency paying for its misses (log-normal through its p50 and p99), hits {:g} ms",
                              o.trace->string(), result.trace.n_req, join(o.cache_policies, ", "),
                              result.records.size() / std::max<size_t>(1, o.cache_policies.size()), *o.hit_latency_ms));
}

}  // namespace lite::optimize

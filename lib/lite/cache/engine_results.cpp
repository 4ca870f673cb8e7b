// Turns the simulators' counters into result records: SHARDS corrections to full-trace units when
// the trace was sampled, latency figures for the result's cost model, and the --sample-check error.
#include <algorithm>
#include <cmath>

#include "lite/cache/engine_internal.hpp"

namespace lite::cache::detail {
namespace {

// SHARDS estimate in full-trace units: the totals are known exactly, the misses scale by 1/R
// (requests of hot keys the sample happened to miss count as hits, as SHARDS_adj assumes).
Counters full_trace_estimate(const Counters& sampled, double scale, const TraceSummary& trace) {
  Counters est;
  est.n_req = trace.n_req_total;
  est.n_req_byte = trace.n_req_byte;
  est.n_miss = std::min<uint64_t>(est.n_req, static_cast<uint64_t>(std::llround(double(sampled.n_miss) * scale)));
  est.n_miss_byte =
      std::min<uint64_t>(est.n_req_byte, static_cast<uint64_t>(std::llround(double(sampled.n_miss_byte) * scale)));
  return est;
}

}  // namespace

void collect_records(const CacheSimOptions& opt, const std::vector<SizeChoice>& sizes, const SamplingPlan& plan,
                     const SimulatorSet& set, CacheSimResult& result) {
  for (const auto& slot : set.slots) {
    SimRecord r;
    r.policy = opt.policies[slot.policy].label();
    r.size = sizes[slot.size].size;
    r.size_text = sizes[slot.size].text;
    r.simulated_size = scaled_size(r.size, plan);
    r.counters = slot.sim->counters;
    r.sampled = plan.sampling();
    double scale = 1.0;
    if (plan.sampling()) {
      r.sampled_counters = r.counters;
      scale = 1.0 / plan.rate;
      r.counters = full_trace_estimate(r.counters, scale, result.trace);
    }
    r.memory_bytes = slot.sim->memory_bytes();
    if (result.cost_model == "constant") r.latency = latency_constant(r.counters, opt.hit_latency_ms, *opt.miss_latency_ms);
    else if (result.cost_model == "cost column")
      r.latency = latency_from_costs(r.counters, opt.hit_latency_ms, slot.sim->miss_cost, scale);
    else if (result.cost_model == "profiles")
      for (const auto& v : opt.variants) r.variants.emplace_back(v.label, latency_from_variant(r.counters, opt.hit_latency_ms, v));
    if (slot.full) r.full = slot.full->counters;
    result.records.push_back(std::move(r));
  }
}

SamplingCheck check_sampling(const std::vector<SimRecord>& records, bool bytes) {
  SamplingCheck chk;
  double sum = 0;
  for (const auto& r : records) {
    double e = std::fabs(r.counters.miss_ratio() - r.full->miss_ratio());
    sum += e;
    if (e >= chk.max_abs_error) {
      chk.max_abs_error = e;
      chk.worst = r.policy + " @ " + size_label(r.size, bytes);
    }
  }
  chk.mean_abs_error = records.empty() ? 0 : sum / double(records.size());
  return chk;
}

}  // namespace lite::cache::detail

// Turns the simulators' counters into result records: SHARDS corrections to full-trace units when
// the trace was sampled, latency figures for the result's cost model, and the --sample-check error.
#include <algorithm>
#include <cmath>

#include "lite/cache/engine_internal.hpp"

namespace lite::cache::detail {
namespace {

// SHARDS estimate in full-trace units: the totals are known exactly, the misses scale by 1/R
// (requests of hot keys the sample happened to miss count as hits, as SHARDS_adj assumes), with R the
// rate the sample achieved over objects under fixed-rate sampling (object_rate_internal.hpp).
Counters full_trace_estimate(const Counters& sampled, double scale, const TraceSummary& trace) {
  Counters est;
  est.n_req = trace.n_req_total;
  est.n_req_byte = trace.n_req_byte;
  est.n_miss = std::min<uint64_t>(est.n_req, static_cast<uint64_t>(std::llround(double(sampled.n_miss) * scale)));
  est.n_miss_byte =
      std::min<uint64_t>(est.n_req_byte, static_cast<uint64_t>(std::llround(double(sampled.n_miss_byte) * scale)));
  return est;
}

// Sampled: a 95% half-width for the miss ratio, 1.96 sqrt(p(1-p)/n) over the n sampled requests. It
// treats sampled requests as independent, which they are not (a key is sampled with all its
// requests), so it is a floor; the error that dominates in practice, a scaled cache of only a few
// objects, is flagged separately (small_sample) rather than folded into a formula.
double miss_ratio_half_width(const Counters& sampled) {
  if (sampled.n_req == 0) return 1.0;
  const double p = sampled.miss_ratio();
  return 1.96 * std::sqrt(p * (1 - p) / double(sampled.n_req));
}

// Objects the scaled cache holds: the size itself in object mode; in byte mode the size over the
// trace's mean request size.
double scaled_objects(uint64_t simulated_size, bool bytes, const TraceSummary& trace) {
  if (!bytes) return double(simulated_size);
  const double mean = trace.n_req_total ? double(trace.n_req_byte) / double(trace.n_req_total) : 1.0;
  return double(simulated_size) / std::max(mean, 1.0);
}

}  // namespace

void collect_records(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes, const SamplingPlan& plan,
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
      scale = 1.0 / plan.estimate_rate;
      r.counters = full_trace_estimate(r.counters, scale, result.trace);
      r.miss_ratio_error = miss_ratio_half_width(*r.sampled_counters);
      r.small_sample = scaled_objects(r.simulated_size, opt.bytes, result.trace) < double(kMinSampledObjects);
    }
    r.memory_bytes = slot.sim->memory_bytes();
    if (result.cost_model == "constant") {
      r.latency = latency_constant(r.counters, opt.hit_latency_ms, *opt.miss_latency_ms);
      r.miss_cost_s = double(r.counters.n_miss) * *opt.miss_latency_ms / 1000.0;
    } else if (result.cost_model == "cost column") {
      r.latency = latency_from_costs(r.counters, opt.hit_latency_ms, slot.sim->miss_cost, scale);
      r.miss_cost_s = slot.sim->miss_cost.sum() * scale / 1000.0;
    }
    if (r.miss_cost_s && result.trace.total_cost_s) r.saved_cost_s = *result.trace.total_cost_s - *r.miss_cost_s;
    if (result.cost_model == "profiles")
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

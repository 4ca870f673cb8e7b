// What simulate() will run, decided before the main pass: the sizes (given, fractions of the working
// set, or the auto set) and one simulator per policy x size, each given the scaled size when the
// trace is sampled (SHARDS: a cache of size S on the full trace behaves like one of S*R on the
// sample). Simulators filter the sample themselves only when some consumer needs the unsampled stream.
#include <fmt/format.h>

#include <algorithm>

#include "lite/cache/engine_internal.hpp"
#include "lite/core/error.hpp"

namespace lite::cache::detail {

std::vector<SizeChoice> resolve_sizes(const std::vector<SizeSpec>& given, uint64_t wss, bool bytes,
                                      const std::string& trace_name) {
  std::vector<SizeChoice> sizes;
  if (given.empty()) {
    for (double f : auto_size_fractions()) {
      uint64_t s = static_cast<uint64_t>(double(wss) * f);
      if (s > 0) sizes.push_back({s, fmt::format("{:g}%", f * 100)});
    }
    if (sizes.empty())
      throw InputError(trace_name, "the working set is too small to pick sizes automatically", "pass {sizes}");
  } else {
    for (const auto& s : given) {
      if (s.fraction > 0) {
        uint64_t v = static_cast<uint64_t>(double(wss) * s.fraction);
        if (v == 0)
          throw UsageError(fmt::format("{{sizes}}: {} of a working set of {} is 0; use a larger fraction", s.text,
                                       size_label(wss, bytes)));
        sizes.push_back({v, s.text});
      } else {
        sizes.push_back({s.absolute, s.text});
      }
    }
  }
  std::stable_sort(sizes.begin(), sizes.end(), [](const SizeChoice& a, const SizeChoice& b) { return a.size < b.size; });
  sizes.erase(std::unique(sizes.begin(), sizes.end(),
                          [](const SizeChoice& a, const SizeChoice& b) { return a.size == b.size; }),
              sizes.end());
  return sizes;
}

std::vector<Simulator*> SimulatorSet::consumers() const {
  std::vector<Simulator*> out;
  for (const auto& s : slots) {
    out.push_back(s.sim.get());
    if (s.full) out.push_back(s.full.get());
  }
  if (profiler) out.push_back(profiler.get());
  for (const auto& p : partitions) out.push_back(p.consumer.get());
  return out;
}

SimulatorSet build_simulators(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes,
                              const SamplingPlan& plan, const std::vector<bool>& wanted, bool run_curve,
                              const std::vector<size_t>& curve_partitions) {
  SimulatorSet set;
  for (size_t p = 0; p < opt.policies.size(); ++p)
    for (size_t s = 0; s < sizes.size(); ++s) {
      if (!wanted.empty() && !wanted[p * sizes.size() + s]) continue;
      Slot slot{p, s, nullptr, nullptr};
      slot.sim = make_simulator(opt.policies[p], scaled_size(sizes[s].size, plan), opt.bytes);
      if (plan.sampling() && !plan.reader_filter) slot.sim->sample_threshold = plan.threshold;
      if (opt.sample_check) slot.full = make_simulator(opt.policies[p], sizes[s].size, opt.bytes);
      set.slots.push_back(std::move(slot));
    }
  if (opt.mrc && run_curve) {
    std::vector<uint64_t> q;
    for (const auto& s : sizes) q.push_back(s.size);
    if (opt.mrc_partitions > 0) {
      add_partition_profilers(opt, q, curve_partitions, set);
      return set;
    }
    auto profiler = opt.sample_objects ? std::make_unique<LruProfiler>(opt.bytes, q, 1.0, opt.sample_objects)
                                       : std::make_unique<LruProfiler>(opt.bytes, q, plan.rate);
    set.profiler = std::make_unique<ProfilerConsumer>(std::move(profiler));
  }
  return set;
}

}  // namespace lite::cache::detail

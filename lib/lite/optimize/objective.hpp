#pragma once
// What "cheapest configuration that meets the target" means, written once and unit-tested on hand-made variants:
// which variants meet the accuracy budget and the target (alone or behind a cache), how they are ranked, the
// screening rules that stop measuring a variant once it cannot win, the Pareto frontier, and the words for why
// each family lost or how far the nearest misses are. Torch-free.
#include <optional>
#include <string>
#include <vector>

#include "lite/optimize/optimize.hpp"

namespace lite::optimize {

struct Objective {
  Target target;
  double accuracy_budget = 0;  // points
  std::optional<double> cost_cache_gib, cost_core_ms;
  int cores = 1;               // threads a forward uses (for core-ms)
  std::string cache_unit = "bytes";
  std::string describe() const;
};

// A quality record: the variant's and the reference's percent on the same samples, with the drop's interval (the
// Wilson interval of the variant's value, lite/core/stats.hpp).
Quality make_quality(const std::string& metric, int64_t samples, double reference, double value);

// The variant's figure for the target with no cache: p99, p50, samples/s or speedup.
double target_figure(const Latency& latency, const Target& target);
bool meets(double figure, const Target& target);
// What the service sees: the cache's figure when the variant needs one and it reaches the target, else its own.
double served_figure(const Variant& v, const Target& target);
uint64_t cache_size_needed(const Variant& v);  // 0 without a cache

// Sets meets_accuracy, meets_latency_alone, feasible and cost of a fully measured variant.
void judge(Variant& v, const Objective& objective);
// Whether `a` is cheaper than `b` under the objective (both feasible).
bool cheaper(const Variant& a, const Variant& b, const Objective& objective);

// After the screen: why the variant cannot win and needs no full measurement, or "" to measure it. Rules:
// its accuracy drop is above the budget even at the low end of its 95% interval; without a cache, its screened
// latency misses the target by more than the screen's noise allowance (no cache to help); or a variant already
// measured within the accuracy budget is faster by that allowance, comparing the 95% intervals of the two
// speedups over the original (a slower variant meets the target only where the faster one does, needs at least as
// large a cache and more core time: never cheaper).
inline constexpr double kScreenNoise = 1.25;
// `baseline_p50_ms`: the original's p50 timed at the start, which the screened speedup scales (0: not used).
std::string screen_out_reason(const Variant& v, const Objective& objective, const std::vector<Variant>& measured,
                              bool cache_available, double baseline_p50_ms = 0);

// Marks chosen (the cheapest feasible) and on_frontier; returns the choice's index.
std::optional<size_t> choose(std::vector<Variant>& variants, const Objective& objective);
// One line per family (prune ratio, quantization mode) that holds no chosen variant: why it lost.
std::vector<std::string> family_verdicts(const std::vector<Variant>& variants, const Objective& objective);
// When nothing is feasible: the closest variants and by how much each misses (latency, accuracy), closest first.
std::vector<std::string> nearest_misses(const std::vector<Variant>& variants, const Objective& objective,
                                        size_t count = 3);

}  // namespace lite::optimize

#include "lite/llm/prefill_grid.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lite/core/clock.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/stats.hpp"
#include "lite/llm/generate.hpp"

namespace lite::llm {

PrefillGridPlan prefill_grid_defaults(int64_t max_context) {
  PrefillGridPlan p;
  // Mostly lengths that are not multiples of 16, as most prompts are: on GPT-2-small (2 threads) 24, 40 and 56 new
  // tokens took 82.9, 94.6 and 111.1 ms against 80.3, 84.4 and 108.8 for 32, 48 and 64, so a grid of powers of two
  // fitted a model 10-17% under the TTFT of lengths between them.
  for (int64_t n : {16, 28, 44, 76, 124, 188, 284, 412, 512})
    if (n <= max_context) p.new_tokens.push_back(n);
  for (int64_t k : {0, 64, 256, 1024})
    if (k + 16 <= max_context) p.cached_tokens.push_back(k);
  return p;
}

namespace {

// One point: the median of `repeats` timed prefills of `fresh` after `cached` ids (prefilled anew, untimed, before
// each call, so a model that updates its cache in place starts from the same state every time).
double time_point(Decoder& d, const torch::Tensor& cached, const torch::Tensor& fresh, int repeats) {
  std::vector<double> ms;
  for (int i = 0; i <= repeats; ++i) {  // call 0 is untimed: the executor specialises on a new shape
    throw_if_interrupted();
    const bool has_context = cached.size(1) > 0;
    const Step context = has_context ? d.prefill(cached) : Step{};
    const auto start = Clock::now();
    const Step step = has_context ? d.extend(fresh, context.cache) : d.prefill(fresh);
    step.last_logits.argmax(-1);
    if (i > 0) ms.push_back(1000 * seconds_since(start));
  }
  return stats::median(ms);
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> prefill_grid_points(const PrefillGridPlan& plan, int64_t max_context) {
  std::vector<std::pair<int64_t, int64_t>> points;
  for (size_t j = 0; j < plan.cached_tokens.size(); ++j)
    for (size_t i = 0; i < plan.new_tokens.size(); ++i)
      if (plan.new_tokens[i] + plan.cached_tokens[j] <= max_context && !(plan.checkerboard && (i + j) % 2))
        points.emplace_back(plan.new_tokens[i], plan.cached_tokens[j]);
  return points;
}

cache::prefix::PrefillTable measure_prefill_grid(Decoder& decoder, const PrefillGridPlan& plan, int64_t max_context,
                                                 Progress& progress) {
  cache::prefix::PrefillTable table;
  const auto points = prefill_grid_points(plan, max_context);
  ProgressPhase phase(progress, "prefill-cost grid", points.size());
  for (const auto& [n, k] : points) {
    const torch::Tensor all = random_prompt(1, n + k, plan.vocab, plan.seed + uint64_t(n * 7919 + k));
    const torch::Tensor cached = all.narrow(1, 0, k), fresh = all.narrow(1, k, n);
    table.points.push_back({uint64_t(n), uint64_t(k), time_point(decoder, cached, fresh, plan.repeats)});
    phase.advance();
  }
  return table;
}

}  // namespace lite::llm

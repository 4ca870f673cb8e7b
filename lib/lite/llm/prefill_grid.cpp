#include "lite/llm/prefill_grid.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "lite/core/clock.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/stats.hpp"
#include "lite/llm/generate.hpp"

namespace lite::llm {

namespace {

constexpr int64_t kLongestExtraCached = 4096;

// One timed prefill of `fresh` after the context `row` holds, in ms. Each call gets its own copy of that cache (a
// model that updates its cache in place then starts from the same state every time): a copy costs a memcpy where
// prefilling the context anew for every point cost as much as the timed calls themselves (512 cached tokens on a
// 4-layer decoder: 27 ms untimed before each call of that row).
double time_call(Decoder& d, const std::optional<Step>& row, const torch::Tensor& fresh) {
  throw_if_interrupted();
  const c10::IValue context = row ? d.map_cache(row->cache, [](const torch::Tensor& t) { return t.clone(); })
                                  : c10::IValue();
  const auto start = Clock::now();
  const Step step = row ? d.extend(fresh, context) : d.prefill(fresh);
  step.last_logits.argmax(-1);
  return 1000 * seconds_since(start);
}

}  // namespace

PrefillGridPlan prefill_grid_defaults(int64_t max_context) {
  PrefillGridPlan p;
  // Mostly lengths that are not multiples of 16, as most prompts are: on GPT-2-small (2 threads) 24, 40 and 56 new
  // tokens took 82.9, 94.6 and 111.1 ms against 80.3, 84.4 and 108.8 for 32, 48 and 64, so a grid of powers of two
  // fitted a model 10-17% under the TTFT of lengths between them.
  for (int64_t n : {16, 28, 44, 76, 124, 188, 284, 412, 512})
    if (n <= max_context) p.new_tokens.push_back(n);
  for (int64_t k : {0, 64, 256, 1024})
    if (k + 16 <= max_context) p.cached_tokens.push_back(k);
  // Half the context too where that lies beyond the largest rung (512 for 1024 positions): a table that stopped at
  // 256 cached tokens on GPT-2-small predicted TTFT 14-20% low after 400-600. Capped, as every call of the row
  // first prefills that many tokens untimed.
  const int64_t half = std::min<int64_t>(max_context / 2, kLongestExtraCached);
  if (!p.cached_tokens.empty() && half > p.cached_tokens.back()) p.cached_tokens.push_back(half);
  return p;
}

std::vector<std::pair<int64_t, int64_t>> prefill_grid_points(const PrefillGridPlan& plan, int64_t max_context) {
  std::vector<std::pair<int64_t, int64_t>> points;
  for (size_t j = 0; j < plan.cached_tokens.size(); ++j)
    for (size_t i = 0; i < plan.new_tokens.size(); ++i)
      if (plan.new_tokens[i] + plan.cached_tokens[j] <= max_context && !(plan.checkerboard && (i + j) % 2))
        points.emplace_back(plan.new_tokens[i], plan.cached_tokens[j]);
  return points;
}

namespace {
cache::prefix::PrefillTable table_of(const std::vector<std::pair<int64_t, int64_t>>& points,
                                     const std::vector<std::vector<double>>& ms) {
  cache::prefix::PrefillTable table;
  for (size_t i = 0; i < points.size(); ++i)
    table.points.push_back({uint64_t(points[i].first), uint64_t(points[i].second), stats::median(ms[i])});
  return table;
}
}  // namespace

cache::prefix::PrefillTable measure_prefill_grid(Decoder& decoder, const PrefillGridPlan& plan, int64_t max_context,
                                                 Progress& progress, const GridSettled& settled) {
  const auto points = prefill_grid_points(plan, max_context);
  std::vector<torch::Tensor> fresh;  // per point; a row's points share its cached ids (points are cached-major)
  std::map<int64_t, torch::Tensor> cached;
  for (const auto& [n, k] : points) {
    fresh.push_back(random_prompt(1, n, plan.vocab, plan.seed + uint64_t(n * 7919 + k)));
    if (k > 0 && !cached.count(k)) cached[k] = random_prompt(1, k, plan.vocab, plan.seed + uint64_t(k));
  }
  // Pass 0 is untimed (the executor specialises on each new shape); then each pass times every point once, so a
  // drift in the machine's speed spreads over the grid instead of falling on a few neighbouring points (on a VM here
  // 5 calls in a row at one point moved 5-15% between visits). A row's context is prefilled once per pass.
  std::vector<std::vector<double>> ms(points.size());
  std::vector<double> pass_total_ms;
  ProgressPhase phase(progress, "prefill-cost grid", points.size() * size_t(plan.repeats + 1));
  for (int pass = 0; pass <= plan.repeats; ++pass) {
    std::optional<Step> row;
    for (size_t i = 0; i < points.size(); ++i) {
      const int64_t k = points[i].second;
      if (k == 0) row.reset();
      else if (!row || i == 0 || points[i - 1].second != k) row = decoder.prefill(cached.at(k));
      const double t = time_call(decoder, row, fresh[i]);
      if (pass > 0) ms[i].push_back(t);
      phase.advance();
    }
    if (pass == 0) continue;
    double total = 0;
    for (const auto& point : ms) total += point.back();
    pass_total_ms.push_back(total);
    if (settled && pass < plan.repeats && settled(table_of(points, ms), pass_total_ms)) break;
  }
  return table_of(points, ms);
}

}  // namespace lite::llm

#pragma once
// The prefill-cost grid: how long a decoder takes to prefill `new` uncached prompt tokens after `cached` tokens
// whose KV it already holds, measured over a grid of both, written as cache-sim's prefill-cost table
// (cache/prefix/prefill_table.hpp), so a prefix-cache study's TTFT comes from this model on this machine.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "lite/cache/prefix/prefill_table.hpp"
#include "lite/core/progress.hpp"
#include "lite/llm/decoder.hpp"

namespace lite::llm {

struct PrefillGridPlan {
  std::vector<int64_t> new_tokens;     // empty: prefill_grid_defaults()
  std::vector<int64_t> cached_tokens;
  int repeats = 5;                     // passes over the grid timing each point once (the median is kept),
                                       // after one untimed pass
  bool checkerboard = false;           // every other point, alternating along both axes: half the grid, every length
  int64_t vocab = 0;
  uint64_t seed = 1;
};

// The grid for a model of `max_context` positions: new tokens 16..512 and cached 0, 64, 256, 1024 and half the
// context where that is longer than the largest of these that fits (at most 4096), every point fitting.
PrefillGridPlan prefill_grid_defaults(int64_t max_context);

// The (new, cached) points of `plan` that fit in max_context, cached-major; with `checkerboard`, every other one.
std::vector<std::pair<int64_t, int64_t>> prefill_grid_points(const PrefillGridPlan& plan, int64_t max_context);

// Measures every (new, cached) point of the plan that fits in max_context (prefill_grid_points). A stateless decoder holds no cache, so
// its "cached" tokens are recomputed: the table says what that model costs.
// `settled`, when given, is asked after each timed pass but the last with the table so far (each point's median over
// the passes so far) and each timed pass's total ms (their spread is the machine's drift between passes); true ends
// the measurement there.
using GridSettled =
    std::function<bool(const cache::prefix::PrefillTable& so_far, const std::vector<double>& pass_total_ms)>;
cache::prefix::PrefillTable measure_prefill_grid(Decoder& decoder, const PrefillGridPlan& plan, int64_t max_context,
                                                 Progress& progress, const GridSettled& settled = {});

}  // namespace lite::llm

#pragma once
// When timing a variant beside the original has told the search what it needs, so the rest of --duration is not
// spent: the sequential stop that makes a screen and a full measurement cost what their decision needs, as
// quantize's and prune's settle rule does for a speedup. The exhaustive grid never settles: it is the plain
// reference the search is checked against. Torch-free.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "lite/optimize/options.hpp"

namespace lite::optimize {

struct SettleRule {
  double ratio_width = 0;         // the speedup's 95% interval at most this fraction of the speedup wide
  // The target's figure (p99, p50, speedup) must meet it at the whole of its 95% interval. A variant that seems to
  // miss is timed on: a burst of the machine inflates a p99 measured briefly, the figure a cache is then sized on.
  std::optional<Target> target;
  // The original's median at its first timing: the variant's figure is scaled by it over the original's median in
  // this window, as the measurement's figures are (Latency::window_scale). 0: not scaled.
  double baseline_p50_ms = 0;
  int64_t min_calls = 0;          // never settled on fewer timed calls
  // The lowest speedup (95% interval's low end) of a variant already measured within the accuracy budget: once this
  // variant's speedup lies wholly below it, it cannot be the cheaper of the two and is settled. 0: none.
  double beaten_below = 0;
};

// The screen's rule: the speedup known within a tenth, well inside the kScreenNoise allowance its comparisons give.
SettleRule screen_settle_rule();
// A full measurement's rule: the speedup within 4% (the objective ranks feasible variants on their latency) and
// the target clearly met; or, with `beaten_below`, clearly slower than a variant measured before it.
SettleRule measure_settle_rule(const Target& target, double beaten_below = 0, double baseline_p50_ms = 0);

bool settled(const SettleRule& rule, const std::vector<double>& variant_ms, const std::vector<double>& original_ms);

// `rule`, asked only once the samples have grown by a fifth (at least 8) since the last ask: a bootstrap after
// every call would cost more than the calls.
std::function<bool(const std::vector<double>&, const std::vector<double>&)> paced(const SettleRule& rule);

}  // namespace lite::optimize

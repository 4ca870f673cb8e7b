// The candidate choice of lite quantize (see choice.hpp).
#include "lite/quantize/choice.hpp"

#include <algorithm>
#include <cmath>

namespace lite::quantize {

double geometric_mean(const std::vector<double>& values) {
  double s = 0;
  for (double x : values) s += std::log(x);
  return values.empty() ? 1 : std::exp(s / double(values.size()));
}

size_t common_batches(const std::vector<Candidate>& candidates) {
  size_t n = 0;
  bool any = false;
  for (const auto& c : candidates) {
    if (!c.built || c.speed.ratio.empty()) continue;
    n = any ? std::min(n, c.speed.ratio.size()) : c.speed.ratio.size();
    any = true;
  }
  return n;
}

double speed_score(const Speed& speed, size_t batches) {
  const size_t n = batches == 0 ? speed.ratio.size() : std::min(batches, speed.ratio.size());
  return geometric_mean({speed.ratio.begin(), speed.ratio.begin() + static_cast<std::ptrdiff_t>(n)});
}

bool worth_probing(double chosen_score) { return chosen_score > kWorthProbing; }

bool uncalibrated_pays(double probe_score, double chosen_score) {
  return probe_score > 0 && probe_score <= kWorthProbing && probe_score <= chosen_score * kWorthProbing;
}

Choice choose_candidate(const std::vector<Candidate>& candidates) {
  Choice choice;
  const size_t batches = common_batches(candidates);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const auto& cand = candidates[i];
    if (!cand.built || !cand.meets_tolerance) continue;
    if (choice.index < 0) {
      choice.index = int(i);
      continue;
    }
    const auto& best = candidates[size_t(choice.index)].speed;
    if (cand.speed.slower != best.slower ? !cand.speed.slower
                                         : speed_score(cand.speed, batches) < speed_score(best, batches))
      choice.index = int(i);
  }
  if (choice.index >= 0) return choice;
  choice.tolerance_met = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const auto& cand = candidates[i];
    if (cand.built && cand.evaluated &&
        (choice.index < 0 || cand.quality.drop < candidates[size_t(choice.index)].quality.drop))
      choice.index = int(i);
  }
  return choice;
}

}  // namespace lite::quantize

// The candidate choice of lite quantize (see choice.hpp).
#include "lite/quantize/choice.hpp"

#include <cmath>

namespace lite::quantize {

double geometric_mean(const std::vector<double>& values) {
  double s = 0;
  for (double x : values) s += std::log(x);
  return values.empty() ? 1 : std::exp(s / double(values.size()));
}

Choice choose_candidate(const std::vector<Candidate>& candidates) {
  Choice choice;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const auto& cand = candidates[i];
    if (!cand.built || !cand.meets_tolerance) continue;
    if (choice.index < 0) {
      choice.index = int(i);
      continue;
    }
    const auto& best = candidates[size_t(choice.index)].speed;
    if (cand.speed.slower != best.slower ? !cand.speed.slower
                                         : geometric_mean(cand.speed.ratio) < geometric_mean(best.ratio))
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

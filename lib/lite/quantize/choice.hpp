#pragma once
// Which candidate lite quantize hands over. Torch-free, so the rule is unit-tested on plain records:
// among the candidates that were built and meet the tolerance, the fastest (geometric mean over the
// measured batch sizes of latency / frozen float latency); when none meets it, the built candidate with
// the smallest drop, and the tolerance gate fails.
#include <vector>

#include "lite/quantize/quantize.hpp"

namespace lite::quantize {

struct Choice {
  int index = -1;  // into the candidates; -1 when none was built
  bool tolerance_met = true;
};

Choice choose_candidate(const std::vector<Candidate>& candidates);
double geometric_mean(const std::vector<double>& values);

}  // namespace lite::quantize

#pragma once
// Which candidate lite quantize hands over. Torch-free, so the rule is unit-tested on plain records:
// among the candidates that were built and meet the tolerance, those not slower than frozen float first,
// then the fastest (geometric mean over the measured batch sizes of latency / frozen float latency; a
// candidate found slower at one batch size may not be timed at the others); when none meets it, the built candidate with
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

#pragma once
// Which candidate lite quantize hands over. Torch-free, so the rule is unit-tested on plain records:
// among the candidates that were built and meet the tolerance, those not slower than frozen float first,
// then the fastest by speed_score; when none meets it, the built candidate with the smallest drop, and the tolerance
// gate fails.
#include <vector>

#include "lite/quantize/quantize.hpp"

namespace lite::quantize {

struct Choice {
  int index = -1;  // into the candidates; -1 when none was built
  bool tolerance_met = true;
};

Choice choose_candidate(const std::vector<Candidate>& candidates);
double geometric_mean(const std::vector<double>& values);
// The batch sizes every built candidate was timed at: timing starts at the smallest and a candidate found slower may
// stop there (quantize.cpp), so the first this many of each candidate's ratios are comparable.
size_t common_batches(const std::vector<Candidate>& candidates);
// A candidate's latency relative to frozen float for comparing candidates: the geometric mean of its ratios at the
// first `batches` batch sizes (all of them when it has fewer).
double speed_score(const Speed& speed, size_t batches);

// Auto without calibration data times static int8 uncalibrated (speed only) when the chosen candidate's speed score
// is above kWorthProbing (not even 10% faster than frozen float), and says it would pay when its score is at most
// kWorthProbing and below the chosen one's by the same factor: a gap the interleaved timing's noise does not make.
inline constexpr double kWorthProbing = 0.9;
bool worth_probing(double chosen_score);
bool uncalibrated_pays(double probe_score, double chosen_score);

}  // namespace lite::quantize

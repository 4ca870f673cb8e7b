// The run's time (quantize.cpp's run()): where it went, by (stage, mode); what {budget_s} leaves; each latency
// measurement's share of it; and the estimate announced before the candidates are built, from what the float
// model has cost so far.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "lite/core/text.hpp"
#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

void Context::spend(const std::string& stage, const std::string& mode, double seconds) {
  for (auto& t : time)
    if (t.stage == stage && t.mode == mode) {
      t.seconds += seconds;
      return;
    }
  time.push_back({stage, mode, seconds});
}

double Context::remaining_s() const {
  return o.budget_s ? *o.budget_s - seconds_since(start) : std::numeric_limits<double>::infinity();
}

bool Context::budget_spent() const { return remaining_s() <= 0; }

double Context::measurement_budget() const {
  double b = measure::comparison_budget_s(o.timing);
  if (o.budget_s) b = std::min(b, std::max(0.1, remaining_s() / (2.0 * std::max(1, measurements_left))));
  return b;
}

void Context::note(std::string text) {
  if (std::find(notes.begin(), notes.end(), text) == notes.end()) notes.push_back(std::move(text));
}

// Says up front what the run will measure and about how long it will take, from what the float model cost so far:
// each candidate's timing (interleaved with frozen float: the warm-up and the calls a measurement usually settles
// after, at most the measurement budget per batch size), static's calibration pass, and the evaluation of the judged
// samples (the float model's rest and, for auto, about two candidates, since it stops at the first that meets the
// tolerance). Builds are not estimated.
void announce_plan(const Context& c, const QuantizeResult& r, size_t modes, int64_t calib_samples) {
  double float_eval_s = 0;
  for (const auto& t : c.time)
    if (t.stage == "evaluation" && t.mode == "float") float_eval_s += t.seconds;
  const double per_sample_s = c.float_done > 0 ? float_eval_s / double(c.float_done) : 0.0;
  double timing_s = 0;
  std::vector<std::string> batches;
  for (const auto& l : r.float_latency) {
    batches.push_back(std::to_string(l.batch));
    // A measurement usually settles after kMinSettleCalls timed pairs (or runs its fixed {iterations}).
    const int calls = c.o.timing.warmup + (c.o.timing.iterations ? *c.o.timing.iterations : measure::kMinSettleCalls);
    timing_s += std::min(c.measurement_budget(), 2 * double(calls) * l.median_ms / 1000);
  }
  const double candidates_evaluated = c.auto_mode ? std::min<double>(2, double(modes)) : 1;
  const double evaluation_s = per_sample_s * (double(std::max<int64_t>(c.judged - c.float_done, 0)) +
                                              candidates_evaluated * double(c.judged));
  const double total_s = double(modes) * timing_s + 1.3 * per_sample_s * double(calib_samples) + evaluation_s;
  c.progress.announce(fmt::format(
      "lite quantize: {} mode{} to build and time at batch {}, then quality judged on {} sample{}{}; about {:.0f} s "
      "plus the builds (the float model: {:.0f} ms a sample to evaluate)",
      modes, modes == 1 ? "" : "s", join(batches, ", "), c.judged, c.judged == 1 ? "" : "s",
      c.auto_mode && modes > 1 ? ", fastest mode first" : "", total_s, 1000 * per_sample_s));
}

}  // namespace lite::quantize

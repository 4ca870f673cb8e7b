#pragma once
// The timing loop's settings (TimingOptions: what profile/timing.hpp runs) and the timing knobs a verb that
// measures latency shares with the others (TimingKnobs: profile, quantize and prune; lite run's evaluate through
// profile's keys): one field list, one set of rules, one translation into the loop's settings. Torch-free.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite::measure {

struct TimingOptions {
  int warmup = 20;          // untimed iterations first (the profiling executor specializes in the first 2)
  int iterations = 0;       // timed iterations; 0 = run for `duration_s`
  double duration_s = 2.0;  // used when iterations == 0
  int min_iterations = 20;  // with a duration, never fewer than this
  // Seconds one measurement (warm-up + timed calls) may take; 0: no limit. A model whose calls do not fit
  // gets fewer warm-up calls (never fewer than kMinWarmup) and fewer timed calls (never fewer than
  // kMinTimed), and the samples say so (LatencySamples::note). With `may_skip`, a measurement whose
  // minimum (kMinWarmup + kMinTimed calls) cannot fit stops after its first calls and is marked skipped.
  double budget_s = 0;
  bool may_skip = false;
  // The budget was the user's word: a measurement still running at 2 x budget_s + 30 s (a forward that never
  // returns, which no soft budget stops) ends the process with exit 2 (core/deadline.hpp).
  bool hard_budget = false;
  // Interleaved timing only (time_interleaved), duration mode: stop the timed calls once the 95% bootstrap
  // interval of the median latency ratio A/B lies wholly above or below 1 and is narrower than this fraction
  // of the ratio (the comparison is decided; more calls would only narrow it), and end the warm-up once a
  // call is within 10% of the cheapest before it (at least kMinWarmup + 1 calls). 0: never.
  double settle_width = 0;
  // Interleaved timing only, duration mode: the caller's own rule for when the measurement has decided what it is
  // for, asked with the timed samples of A and B after each timed call from kMinSettleCalls on (the rule keeps
  // its own pace: a bootstrap every call is dear). Empty: never; asked beside settle_width's rule.
  std::function<bool(const std::vector<double>& a_ms, const std::vector<double>& b_ms)> settled_by;
};
// With settle_width, never fewer timed calls than this (the interval of fewer is too coarse to trust).
inline constexpr int kMinSettleCalls = 8;
// The profiling executor specializes a graph in its first two calls: never fewer warm-up calls than this
// under a budget (unless warmup itself asks for fewer).
inline constexpr int kMinWarmup = 2;
// Never fewer timed calls than this under a budget (a median and an interval need a few samples).
inline constexpr int kMinTimed = 3;
// Seconds one latency measurement of a transform (quantize's candidate against frozen float, prune's pruned model
// against the original, at one batch size) may take when the user gave no budget: batch sizes whose minimum
// measurement does not fit are skipped, slow ones get fewer calls.
inline constexpr double kMeasurementBudget = 10.0;
// lite profile's per-measurement budget when {budget_s} is not given.
inline constexpr double kDefaultProfileBudget = 60.0;
// The loop settings' value rules, keyed "warmup", "iterations", "duration_s", "budget_s", "settle_width".
void validate(const TimingOptions& o);
void to_json(nlohmann::json& j, const TimingOptions& o);

// The keys "warmup", "iterations", "duration_s" and "threads" of a verb's options. Each verb sets its own
// defaults (profile warms up longer than quantize) with a member initializer.
struct TimingKnobs {
  int warmup = 20;                 // untimed calls before each measurement
  std::optional<int> iterations;   // timed calls per measurement; unset: run for duration_s
  double duration_s = 2.0;         // seconds per measurement when iterations is unset
  int threads = 0;                 // intra-op threads; 0: libtorch's default
};

// The knobs' one field list, spliced into a verb's own (OptionReader / OptionWriter).
template <class Fields, class Knobs>
Fields& timing_knob_fields(Fields& f, Knobs& k) {
  return f.field("warmup", k.warmup)
      .field("iterations", k.iterations)
      .field("duration_s", k.duration_s)
      .field("threads", k.threads);
}
// The knobs' value rules: OptionError naming the key.
void validate(const TimingKnobs& k);
// Batch sizes to time at, under `key`: at least one, each at least 1.
void check_batch_sizes(const std::string& key, const std::vector<int64_t>& batches);
// The loop's settings for the knobs; budget_s and the rest stay the caller's.
TimingOptions timing_options(const TimingKnobs& k);
// Seconds one comparison of a transform with its baseline (quantize's candidate against frozen float, prune's
// pruned model against the original, at one batch size) may take: kMeasurementBudget, or more when duration_s
// asks for more.
double comparison_budget_s(const TimingKnobs& k);
// The settings of such a comparison: the knobs, at least 5 timed calls, within comparison_budget_s, and (unless a
// fixed number of iterations was asked) settled once the ratio's interval is decided and within 20%.
TimingOptions comparison_timing(const TimingKnobs& k);

}  // namespace lite::measure

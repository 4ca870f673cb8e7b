// The timing settings' rules and their JSON, and the timing knobs profile, quantize and prune share: one set of
// value rules for "warmup", "iterations", "duration_s", "threads" and "batches". Torch-free.
#include "lite/measure/timing_options.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lite/core/options.hpp"

namespace lite::measure {

using namespace option_rules;

namespace {

// The one duration rule, for the knobs and the loop's settings alike.
void check_duration(double duration_s) {
  if (!(duration_s > 0) || !(duration_s <= 3600))  // NaN and infinity too
    throw OptionError("duration_s",
                      fmt::format("must be a finite number of seconds, more than 0 and at most 3600, got {}", duration_s),
                      "or give a number of {iterations}");
}

}  // namespace

void validate(const TimingOptions& o) {
  at_least("warmup", o.warmup, 0);
  if (!std::isfinite(o.budget_s) || o.budget_s < 0)
    throw OptionError("budget_s", fmt::format("must be a number of seconds, at least 0, got {}", o.budget_s),
                      "give the seconds a measurement may take");
  if (!std::isfinite(o.settle_width) || o.settle_width < 0)
    throw OptionError("settle_width", fmt::format("must be a fraction, at least 0, got {}", o.settle_width),
                      "give e.g. 0.05 (stop once the interval is 5% wide), or 0 to time the whole duration");
  if (o.iterations == 0)
    check_duration(o.duration_s);
  else
    at_least("iterations", o.iterations, 1, "omit it to run for {duration_s}");
}

void to_json(nlohmann::json& j, const TimingOptions& o) {
  j = nlohmann::json{{"warmup", o.warmup}, {"iterations", o.iterations}, {"duration_s", o.duration_s},
                     {"min_iterations", o.min_iterations}, {"budget_s", o.budget_s}};
}

void validate(const TimingKnobs& k) {
  at_least("warmup", k.warmup, 0);
  if (k.iterations)
    in_range("iterations", *k.iterations, 1, 1e8, "omit it to run for {duration_s}");
  else
    check_duration(k.duration_s);
  thread_count("threads", k.threads);
}

void check_batch_sizes(const std::string& key, const std::vector<int64_t>& batches) {
  if (batches.empty()) throw OptionError(key, "needs at least one batch size", "give e.g. {" + key + "} 1,32");
  for (auto b : batches) at_least(key, double(b), 1);
}

TimingOptions timing_options(const TimingKnobs& k) {
  TimingOptions t;
  t.warmup = k.warmup;
  t.iterations = k.iterations.value_or(0);
  t.duration_s = k.duration_s;
  return t;
}

double comparison_budget_s(const TimingKnobs& k) { return std::max(kMeasurementBudget, 2 * (k.duration_s + 1)); }

TimingOptions comparison_timing(const TimingKnobs& k) {
  TimingOptions t = timing_options(k);
  t.min_iterations = 5;
  t.budget_s = comparison_budget_s(k);
  if (!k.iterations) t.settle_width = 0.2;
  return t;
}

}  // namespace lite::measure

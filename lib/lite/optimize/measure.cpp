// Measuring lite optimize's variants the one way for all: quality on the evaluation samples against the original
// (top-1 accuracy with labels, else top-1 agreement with the original's outputs), and forward latency at the
// target's batch size timed interleaved with the fastest float form of the original (frozen and optimized for
// inference, as every verb's speed figures use), so drift in machine state hits both alike.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "lite/core/error.hpp"
#include "lite/core/stats.hpp"
#include "lite/measure/evaluate.hpp"
#include "lite/measure/frozen_float.hpp"
#include "lite/measure/timing.hpp"
#include "lite/model/input_binding.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/optimize/objective.hpp"
#include "lite/optimize/search_internal.hpp"

namespace lite::optimize::detail {

namespace fs = std::filesystem;

namespace {

// Evaluation samples when no eval file is given: seeded random inputs shaped like the timing input.
constexpr int64_t kRandomSamples = 256;

// A model with several inputs gets one random tensor per input, all with the same number of samples.
model::Dataset random_dataset(const std::vector<torch::Tensor>& inputs) {
  model::Dataset d;
  uint64_t seed = 1;
  for (model::InputSpec spec : model::describe_inputs(inputs)) {
    if (spec.shape.empty())
      throw InputError("{eval}", "the model takes a scalar input, which random samples cannot batch",
                       "pass {eval} FILE");
    spec.shape[0] = kRandomSamples;
    const torch::Tensor t = model::random_input(spec, seed++);
    if (d.x.defined())
      d.more_inputs.push_back(t);
    else
      d.x = t;
  }
  d.source = "random inputs";
  return d;
}

// Per sample 1 when the argmax of `outputs` (over dim 1) is `labels`, else 0.
std::vector<double> hits(const torch::Tensor& outputs, const torch::Tensor& labels) {
  const torch::Tensor right = outputs.argmax(1).eq(labels.to(torch::kLong)).to(torch::kDouble).contiguous();
  return std::vector<double>(right.data_ptr<double>(), right.data_ptr<double>() + right.numel());
}

measure::TimingOptions timing(double duration_s, int warmup, const SettleRule* settle = nullptr) {
  measure::TimingOptions t;
  if (settle) t.settled_by = paced(*settle);
  t.warmup = warmup;
  t.duration_s = duration_s;
  t.min_iterations = 20;
  t.budget_s = 4 * duration_s + 5;  // a slow model gets fewer calls instead of overrunning the search
  return t;
}

Latency summarise(const std::vector<double>& variant_ms, const std::vector<double>& original_ms, const std::string& note) {
  Latency l;
  const stats::Summary s = stats::summarize(variant_ms);
  l.calls = int64_t(s.count);
  l.mean_ms = s.mean;
  l.p50_ms = s.p50;
  l.p99_ms = s.p99;
  const stats::Interval p99 = stats::quantile_interval(variant_ms, 0.99);
  l.p99_low_ms = p99.low;
  l.p99_high_ms = p99.high;
  l.note = note;
  if (!original_ms.empty()) {
    l.original_p50_ms = stats::median(original_ms);
    const stats::Interval ratio = stats::bootstrap_median_ratio(original_ms, variant_ms);
    l.speedup = ratio.estimate;
    l.speedup_low = ratio.low;
    l.speedup_high = ratio.high;
  }
  return l;
}

}  // namespace

double Reference::percent_on(int64_t samples) const {
  if (correct.empty()) return 100.0;
  const size_t n = samples <= 0 ? correct.size() : std::min(correct.size(), size_t(samples));
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += correct[i];
  return 100.0 * sum / double(n);
}

Reference make_reference(model::LoadedModel& original, const OptimizeOptions& o, std::vector<std::string>& notes,
                         Progress& progress) {
  Reference r;
  r.original_path = original.path;
  if (o.eval) r.eval = model::load_model_data(original.module, *o.eval, o.labels);
  model::InputOptions input_options;
  input_options.specs = o.inputs;
  input_options.batch = o.batch;
  std::string guessed;
  r.timing_inputs = model::resolve_inputs(original, input_options, o.eval ? &r.eval : nullptr, &guessed);
  if (!guessed.empty()) notes.push_back(guessed);
  if (!o.eval) r.eval = random_dataset(r.timing_inputs);
  r.eval_source = r.eval.source.string();
  r.metric = r.eval.has_labels() ? "top-1 accuracy" : "top-1 agreement";
  r.outputs = measure::predict(original.module, r.eval, o.eval_batch, original.path, progress);
  if (r.eval.has_labels()) r.correct = hits(r.outputs, *r.eval.y);
  try {
    measure::FrozenFloat fastest = measure::frozen_float(original.module, r.timing_inputs);
    r.fastest_original = fastest.module;
    if (!fastest.note.empty()) notes.push_back("the original's baseline: " + fastest.note);
  } catch (const std::exception& e) {
    notes.push_back(fmt::format("the original does not freeze ({}); variants are timed beside it as given",
                                model::torch_error_reason(e)));
    r.fastest_original = original.module;
  }
  return r;
}

Quality measure_quality(torch::jit::Module& variant, const fs::path& path, const Reference& r, int64_t samples,
                        int64_t eval_batch, Progress& progress) {
  const int64_t n = samples <= 0 ? r.eval.size() : std::min(samples, r.eval.size());
  const model::Dataset subset = model::take_first(r.eval, n);
  const torch::Tensor outputs = measure::predict(variant, subset, eval_batch, path, progress);
  if (outputs.sizes() != r.outputs.narrow(0, 0, n).sizes())
    throw InputError(path.string(), "its outputs differ in shape from the original's",
                     "a variant must keep the model's outputs");
  double value = 0;
  if (r.eval.has_labels()) {
    const std::vector<double> right = hits(outputs, *subset.y);
    for (double x : right) value += x;
    value = 100.0 * value / double(n);
  } else {
    value = 100.0 * measure::compare_outputs(r.outputs.narrow(0, 0, n), outputs).top1_agreement;
  }
  return make_quality(r.metric, n, r.percent_on(n), value);
}

Latency measure_latency(torch::jit::Module& variant, const fs::path& path, Reference& r, double duration_s, int warmup,
                        const SettleRule* settle, Progress& progress) {
  auto [mine, original] = measure::time_interleaved(variant, path, r.fastest_original, r.original_path,
                                                    r.timing_inputs, timing(duration_s, warmup, settle), progress);
  Latency l = summarise(mine.ms, original.ms, mine.note);
  if (r.baseline_p50_ms > 0 && l.original_p50_ms > 0) {
    l.window_scale = r.baseline_p50_ms / l.original_p50_ms;
    for (double* figure : {&l.mean_ms, &l.p50_ms, &l.p99_ms, &l.p99_low_ms, &l.p99_high_ms}) *figure *= l.window_scale;
  }
  return l;
}

Latency measure_original(Reference& r, double duration_s, int warmup, Progress& progress) {
  const measure::LatencySamples s =
      measure::time_forward(r.fastest_original, r.timing_inputs, timing(duration_s, warmup), r.original_path, progress);
  Latency l = summarise(s.ms, {}, s.note);
  l.original_p50_ms = l.p50_ms;
  r.baseline_p50_ms = l.p50_ms;
  l.speedup = l.speedup_low = l.speedup_high = 1.0;
  return l;
}

}  // namespace lite::optimize::detail

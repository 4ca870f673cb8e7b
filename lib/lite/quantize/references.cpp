// What every candidate is measured against, set up once before the first build: the quality data (eval, else calib,
// else random inputs) and the float model's first chunk of outputs on it, the frozen float model that candidates are
// timed against, the timing inputs per batch size, and the float model's latency as given (which also drops the
// batch sizes whose minimum measurement cannot fit the budget).
#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/stats.hpp"
#include "lite/core/text.hpp"
#include "lite/measure/frozen_float.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

Latency to_latency(int64_t batch, const measure::LatencySamples& s) {
  Latency l;
  l.batch = batch;
  l.samples_ms = s.ms;
  l.iterations = static_cast<int64_t>(s.ms.size());
  auto sum = stats::summarize(s.ms);
  l.median_ms = sum.p50;
  l.p90_ms = sum.p90;
  return l;
}

namespace {

// The float model as given at each batch size. It also decides which batch sizes fit the measurement
// budget: one whose minimum measurement does not fit is dropped (a note says so), except the smallest.
// A single model's step is half a candidate's (two models, interleaved), so it gets half the budget.
void time_float_as_given(Context& c, torch::jit::Module& as_given, QuantizeResult& r) {
  const int candidates = c.measurements_left;  // run() sets it to the number of candidates to build
  c.measurements_left = static_cast<int>(c.inputs.size()) * (1 + candidates);
  double first_call_ms = 0;  // one call at the first (smallest) batch size
  int64_t first_batch = 0;
  for (auto it = c.inputs.begin(); it != c.inputs.end();) {
    const auto& [b, inputs] = *it;
    measure::TimingOptions timing = c.timing;
    timing.budget_s = c.measurement_budget() / 2;
    timing.may_skip = it != c.inputs.begin();
    // A larger batch is estimated from the first before any call: a call of `b` samples costs at least
    // half of b/first_batch calls of the first batch (batching rarely gains more), and a model whose
    // minimum measurement would overrun its budget by that estimate is not called at all (a vit_b_16 call
    // at batch 64 takes a minute here).
    const double estimate_ms = first_call_ms * double(b) / double(std::max<int64_t>(first_batch, 1)) / 2;
    if (timing.may_skip && estimate_ms * (measure::kMinWarmup + measure::kMinTimed) > timing.budget_s * 1000) {
      --c.measurements_left;
      c.measurements_left -= candidates;
      c.note(fmt::format("batch {} was not measured: one call at batch {} takes {:.0f} ms, so one at batch {} "
                         "takes about {:.0f} ms or more, and its minimum measurement overruns the {:.3g} s it may "
                         "take; raise {{budget_s}} or pick smaller {{batches}}",
                         b, first_batch, first_call_ms, b, estimate_ms, timing.budget_s));
      it = c.inputs.erase(it);
      continue;
    }
    auto samples = measure::time_forward(as_given, inputs, timing, c.source.path, c.progress);
    if (it == c.inputs.begin()) {
      first_call_ms = samples.call_ms;
      first_batch = b;
    }
    --c.measurements_left;
    if (samples.skipped) {
      c.measurements_left -= candidates;  // nor will any candidate be
      c.note(fmt::format("batch {} was not measured: {}; raise {{budget_s}} or pick smaller {{batches}}", b,
                         samples.note));
      it = c.inputs.erase(it);
      continue;
    }
    if (!samples.note.empty()) c.note(fmt::format("float at batch {}: {}", b, samples.note));
    r.float_latency.push_back(to_latency(b, samples));
    ++it;
  }
}

}  // namespace

// What quality is judged on (eval, else calib, else random inputs), the float model's outputs and metric on
// it, the frozen float baseline, the timing inputs per batch size, and the as-given float latency.
void prepare_references(Context& c, QuantizeResult& r) {
  const auto& o = c.o;
  auto& source = c.source;
  std::string inferred;  // the note saying which input shape was inferred, when one was
  if (c.eval) {
    c.quality_data = *c.eval;
    c.quality_name = o.eval->string();
  } else if (c.calib) {
    c.quality_data = *c.calib;
    c.quality_name = o.calib->string() + " (the calibration data; pass {eval} for held-out data)";
  } else {
    auto inputs = model::resolve_inputs(source, model::InputOptions{o.inputs, {}, 64, 0x5eed}, nullptr, &inferred);
    if (inputs.size() == 1)
      c.quality_data = model::Dataset{inputs[0], std::nullopt, "random inputs"};
    else
      c.quality_inputs = inputs;
    c.quality_name = "64 random inputs (pass {eval} for a real estimate)";
  }
  c.labels = c.quality_inputs.empty() && c.quality_data.has_labels();
  const model::Dataset* timing_data = c.eval ? &*c.eval : c.calib ? &*c.calib : nullptr;
  for (int64_t b : o.batches) {
    if (o.inputs.empty() && timing_data)
      c.inputs[b] = model::fit_batch_inputs(*timing_data, b);
    else
      c.inputs[b] = model::resolve_inputs(source, model::InputOptions{o.inputs, {}, b, 0x5eed}, nullptr, &inferred);
  }
  if (!inferred.empty()) {
    r.notes.push_back(inferred);
    std::vector<std::string> shapes;
    for (const auto& spec : model::describe_inputs(c.inputs.begin()->second)) shapes.push_back(model::to_string(spec));
    r.guessed_inputs = join(shapes, ", ");
  }
  // The float model's first chunk of the quality data, now: data or inputs the model cannot run are named here
  // ("forward failed on input ...") rather than as a failed freeze; it also sets how many samples are judged.
  judged_total(c);
  timed(c, "freeze", "float", [&] {
    measure::FrozenFloat frozen;
    try {
      frozen = measure::frozen_float(source.module, c.inputs.begin()->second);
    } catch (const std::exception& e) {
      throw InputError(source.path.string(), "torch::jit::freeze failed: " + model::torch_error_reason(e),
                       "lite quantize needs a model that freezes (no training-only code in forward)");
    }
    c.frozen = frozen.module;
    if (!frozen.note.empty()) r.notes.push_back(frozen.note);
  });
  // Timing stops once the candidate-vs-frozen ratio's interval is decided and within 20%; measurement_budget()
  // sets each measurement's budget.
  c.timing = measure::comparison_timing(o.timing);
  // A clone has its own copies of the methods, so fresh executors (see measure_speed's caller): the
  // source module has already run the quality data's batch sizes.
  torch::jit::Module as_given = source.module.clone();
  as_given.eval();
  timed(c, "timing", "float", [&] { time_float_as_given(c, as_given, r); });
}

}  // namespace lite::quantize

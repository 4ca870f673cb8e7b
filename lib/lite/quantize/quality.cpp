// How good a candidate is: its outputs against the float model's on the same samples. The float model's outputs are
// the reference, computed chunk by chunk as candidates need them; its first chunk decides how many samples every
// candidate is judged on (auto scales that to what the float model costs a sample). A candidate is evaluated chunk
// by chunk too, so auto can stop one as soon as its drop cannot fit the tolerance (judging.hpp's rules).
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "lite/core/interrupt.hpp"
#include "lite/core/stats.hpp"
#include "lite/measure/evaluate.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/quantize/judging.hpp"
#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

namespace {

// The outputs quality is judged by: the model's predictions on samples [begin, end) of the quality data, or one
// forward on the random inputs of a model with several inputs. Float reference and candidates go through here alike.
torch::Tensor quality_outputs(const Context& c, torch::jit::Module& m, int64_t begin, int64_t end) {
  // A few calls per model: the profiling executor's instrumented first calls and graph optimization would
  // cost more than they save (timing, which runs many calls, keeps the deployment executor).
  torch::jit::GraphOptimizerEnabledGuard plain(false);
  AllCoresForWork all_cores(c.o.timing.threads > 0);
  if (!c.quality_inputs.empty()) return measure::forward_float(m, c.quality_inputs, c.source.path);
  model::Dataset part = model::rows_of(c.quality_data, begin, end - begin);
  part.y.reset();
  return measure::predict(m, part, c.o.eval_batch, c.source.path, no_progress());
}

int64_t available_samples(const Context& c) { return c.quality_inputs.empty() ? c.quality_data.size() : 1; }

// Sets how many samples candidates are judged on, from the seconds the float model took on its first `ran`.
void decide_judged(Context& c, double seconds, int64_t ran) {
  const int64_t available = available_samples(c);
  double allowance = std::numeric_limits<double>::infinity();  // an explicit mode: one candidate, all samples
  if (c.auto_mode) allowance = c.o.budget_s ? std::min(kJudgeSeconds, *c.o.budget_s / 10) : kJudgeSeconds;
  c.judged = std::max(ran, judged_samples(available, seconds / double(std::max<int64_t>(ran, 1)), allowance,
                                          c.o.eval_samples));
  if (c.judged >= available) return;
  if (c.o.eval_samples)
    c.note(fmt::format("candidates were judged on the first {} of the {} samples of {} ({{eval_samples}})", c.judged,
                       available, c.quality_data.source.string()));
  else
    c.note(fmt::format("candidates were judged on the first {} of the {} samples of {}: the float model takes {:.0f} "
                       "ms a sample, and auto gives judging about {:.0f} s of it (at least {} samples); pass "
                       "{{eval_samples}} N to judge on more",
                       c.judged, available, c.quality_data.source.string(), 1000 * seconds / double(ran), allowance,
                       kMinJudgedSamples));
}

// Adds one chunk's counts: predictions lost and gained against the labels, or without labels top-1s that changed
// from the float model's.
void count_chunk(const Context& c, const torch::Tensor& reference, const torch::Tensor& out, int64_t begin,
                 int64_t end, JudgedCounts& counts) {
  counts.labels = c.labels;
  if (c.labels) {
    const torch::Tensor y = c.quality_data.y->narrow(0, begin, end - begin);
    counts.reference_hits += measure::top1_accuracy(reference, y).correct;  // also checks the labels fit the outputs
    const torch::Tensor reference_right = reference.argmax(1).eq(y), candidate_right = out.argmax(1).eq(y);
    counts.samples += end - begin;
    counts.lost += (reference_right & ~candidate_right).sum().item<int64_t>();
    counts.gained += (candidate_right & ~reference_right).sum().item<int64_t>();
    return;
  }
  const measure::Agreement a = measure::compare_outputs(reference, out);
  counts.samples += a.samples;
  counts.reference_hits += a.samples;
  counts.lost += a.samples - std::llround(a.top1_agreement * double(a.samples));
}

}  // namespace

// The float model's outputs on samples [begin, end) of what is judged; runs it on the samples it has not run yet.
// Its first run decides how many samples are judged (decide_judged).
torch::Tensor float_reference(Context& c, int64_t begin, int64_t end) {
  if (c.float_done < end) {
    const auto t = Clock::now();
    torch::Tensor more = quality_outputs(c, c.source.module, c.float_done, end);
    const double seconds = seconds_since(t);
    c.spend("evaluation", "float", seconds);
    c.float_outputs = c.float_done == 0 ? more : torch::cat({c.float_outputs, more}, 0);
    if (c.judged < 0) decide_judged(c, seconds, end - c.float_done);
    c.float_done = end;
  }
  if (!c.quality_inputs.empty()) return c.float_outputs;
  return c.float_outputs.narrow(0, begin, end - begin);
}

// The samples every candidate is judged on (decided by the float model's first chunk, which never runs past
// {eval_samples}).
int64_t judged_total(Context& c) {
  if (c.judged < 0) {
    const int64_t most = c.o.eval_samples ? std::min(available_samples(c), *c.o.eval_samples) : available_samples(c);
    float_reference(c, 0, next_chunk_end(0, most, c.o.eval_batch));
  }
  return c.judged;
}

// A candidate's quality on the judged samples, evaluated chunk by chunk (judging.hpp). With `stop_over` (auto), it
// stops once the drop cannot fit that tolerance. Its forward seconds are booked to ("evaluation", `book_as`) unless
// `book_as` is empty (the caller's stage holds them); the float model's go to ("evaluation", "float").
Quality measure_quality(Context& c, torch::jit::Module& m, Progress& progress, const std::string& book_as,
                        std::optional<double> stop_over) {
  Quality q;
  q.data = c.quality_name;
  const int64_t total = judged_total(c);
  q.available_samples = available_samples(c);
  ProgressPhase phase(progress, "evaluating", static_cast<uint64_t>(total));
  std::vector<torch::Tensor> outputs;
  JudgedCounts counts;
  int64_t done = 0;
  double candidate_s = 0;
  while (done < total) {
    throw_if_interrupted();
    const int64_t end = c.quality_inputs.empty() ? next_chunk_end(done, total, c.o.eval_batch) : total;
    const torch::Tensor reference = float_reference(c, done, end);
    const auto t = Clock::now();
    outputs.push_back(quality_outputs(c, m, done, end));
    candidate_s += seconds_since(t);
    count_chunk(c, reference, outputs.back(), done, end, counts);
    phase.advance(static_cast<uint64_t>(end - done));
    done = end;
    if (stop_over && done < total && cannot_meet(counts, *stop_over)) {
      q.stopped_early = true;
      break;
    }
  }
  if (!book_as.empty()) {
    c.spend("evaluation", book_as, candidate_s);
    c.seconds_per_sample[book_as] = candidate_s / double(std::max<int64_t>(done, 1));
  }
  q.samples = c.quality_inputs.empty() ? done : outputs.front().dim() > 0 ? outputs.front().size(0) : 1;
  q.agreement = measure::compare_outputs(float_reference(c, 0, done), torch::cat(outputs, 0));
  q.metric = c.labels ? "top-1 accuracy" : "top-1 agreement";
  const stats::Interval drop = drop_interval(counts);
  q.float_value = counts.samples ? 100.0 * double(counts.reference_hits) / double(counts.samples) : 100.0;
  q.value = q.float_value - drop.estimate;
  q.drop = drop.estimate;
  q.drop_low = drop.low;
  q.drop_high = drop.high;
  return q;
}

}  // namespace lite::quantize

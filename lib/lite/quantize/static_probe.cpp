// What would pay, said by the first command: auto without {calib} cannot try static int8, often the only mode that
// makes a CNN faster on a CPU (fp16 and weight-only int8 compute in float32; dynamic covers linear layers only). When
// no candidate auto built is faster than frozen float (choice.hpp's worth_probing), static int8 is built once,
// calibrated with min/max on a few of the random inputs quality is judged on, and timed against frozen float
// interleaved, as the candidates are. Its kernels and layout do not depend on the ranges, so its latency is what a
// calibrated build would show; its quality is unknown. The figure is speed only: it is never judged, chosen or
// written, and the report says {calib} is the missing piece when it pays (choice.hpp's uncalibrated_pays).
#include <algorithm>
#include <memory>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/model/dataset.hpp"
#include "lite/quantize/calibration.hpp"
#include "lite/quantize/choice.hpp"
#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

namespace {

// Random inputs calibrate the probe: enough to observe every value once, few enough to cost nothing.
constexpr int64_t kProbeSamples = 8;

// The first kProbeSamples of the random inputs quality is judged on (several tensors for several inputs).
model::Dataset probe_data(const Context& c) {
  if (c.quality_inputs.empty()) return model::take_first(c.quality_data, kProbeSamples);
  const int64_t n = std::min<int64_t>(kProbeSamples, c.quality_inputs[0].size(0));
  model::Dataset d{c.quality_inputs[0].narrow(0, 0, n), std::nullopt, "random inputs"};
  for (size_t i = 1; i < c.quality_inputs.size(); ++i) d.more_inputs.push_back(c.quality_inputs[i].narrow(0, 0, n));
  return d;
}

// Builds and times the uncalibrated mode; its failure is the probe's problem, never the run's.
void build_and_time(Context& c, const ModeEntry& mode, const Plan& plan, UncalibratedProbe& p) {
  const model::Dataset data = probe_data(c);
  p.calib_samples = data.size();
  std::unique_ptr<Calibrator> none = std::move(c.calibrator);  // null: the run has no calibration data
  const auto regions = c.float_regions;
  c.calibrator = std::make_unique<Calibrator>(&data, data.size(), find_calib_method("minmax"), c.source.path,
                                              c.progress);
  const std::string name = p.mode + " (uncalibrated)";
  try {
    Built b = build(c, mode, plan);
    c.spend("build", name, b.build_s + b.calib_s);
    Candidate cand;
    cand.mode = name;
    c.measurements_left += static_cast<int>(c.inputs.size());
    time_candidate(c, cand, b, false);
    p.speed = cand.speed;
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    p.problem = first_line(e.what());
  }
  c.calibrator = std::move(none);
  c.float_regions = regions;
}

}  // namespace

void probe_uncalibrated(Context& c, const Planned& planned, QuantizeResult& r) {
  if (!c.auto_mode || !planned.uncalibrated || c.budget_spent()) return;
  const Choice choice = choose_candidate(r.candidates);
  if (choice.index < 0) return;
  const size_t batches = common_batches(r.candidates);
  UncalibratedProbe p;
  p.mode = planned.uncalibrated->first->name;
  p.chosen_score = speed_score(r.candidates[size_t(choice.index)].speed, batches);
  if (!worth_probing(p.chosen_score)) return;
  build_and_time(c, *planned.uncalibrated->first, planned.uncalibrated->second, p);
  if (p.problem.empty()) {
    p.speed_score = speed_score(p.speed, batches);
    p.pays = uncalibrated_pays(p.speed_score, p.chosen_score);
  }
  r.uncalibrated = p;
}

}  // namespace lite::quantize

#pragma once
// The stages of lite quantize's run() (quantize.cpp) and the state they share. run() reads as the list of its
// stages; each stage lives in the file that owns its idea:
//   inputs.cpp            the model's layers, the data and calibration statistics, each checked before any work
//   mode_plans.cpp        the modes to try and a plan for each
//   references.cpp        what candidates are measured against: quality data, frozen float, float latency
//   quality.cpp           the float model's outputs, computed as needed, and a candidate's quality on them
//   budget.cpp            where the time goes and what {budget_s} leaves; the up-front estimate
//   candidates.cpp        building each candidate and timing it against frozen float
//   tolerance_search.cpp  layers ranked by sensitivity, then the search for float fallbacks
//   auto_judging.cpp      auto's second pass: candidates judged in the order judging.hpp's rules give
//   static_probe.cpp      auto without calibration data: static int8 timed uncalibrated, speed only
//   write_artifact.cpp    the choice written with its provenance
//   gates.cpp             the gates on the chosen candidate (torch-free, gates_internal.hpp)
// Not installed, and included by none of the CLI (quantize.hpp is the public, torch-free header).
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/clock.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/run_context.hpp"
#include "lite/measure/machine_load.hpp"
#include "lite/measure/timing.hpp"
#include "lite/measure/timing_options.hpp"
#include "lite/quantize/quantize.hpp"
#include "lite/quantize/quantize_internal.hpp"
#include "lite/quantize/scheme.hpp"

namespace lite::quantize {

// Everything one run() holds while it works: the options, the data, the references candidates are measured
// against, and the time spent and left.
struct DecoderReference;  // decoder_quantize.hpp

struct Context {
  Context(const QuantizeOptions& options, Progress& p, const RunContext& r, model::LoadedModel& s,
          Clock::time_point started)
      : o(options), progress(p), run_context(r), source(s), start(started) {}
  const QuantizeOptions& o;
  Progress& progress;
  const RunContext& run_context;
  model::LoadedModel& source;
  std::optional<model::Dataset> calib;
  std::optional<model::Dataset> eval;
  model::Dataset quality_data;                // what accuracy/agreement is measured on
  std::vector<torch::Tensor> quality_inputs;  // instead, for models with several inputs (random, one batch)
  std::string quality_name;
  bool labels = false;
  bool auto_mode = false;  // candidates are judged on a number of samples scaled to the float model's cost
  // The float model's outputs on the first `float_done` samples of the quality data (all of quality_inputs'
  // batch), computed chunk by chunk as candidates need them (float_reference).
  torch::Tensor float_outputs;
  int64_t float_done = 0;
  int64_t judged = -1;  // samples candidates are judged on; -1 until the float model's first chunk has run
  std::map<std::string, double> seconds_per_sample;  // a candidate's forward seconds per sample in evaluation
  torch::jit::Module frozen;
  std::map<int64_t, std::vector<torch::Tensor>> inputs;  // per batch size
  std::unique_ptr<Calibrator> calibrator;
  measure::TimingOptions timing;
  Clock::time_point start;
  std::vector<TimeSpent> time;     // where the time went, merged by (stage, mode)
  std::vector<std::string> notes;  // how the budget shaped the run
  int measurements_left = 0;       // latency measurements still to come (for the budget's share)
  std::vector<FloatRegion> float_regions;  // modules an earlier build kept float (reused by later builds)
  std::optional<measure::LoadWatch> load;  // samples the machine's load between latency measurements
  const DecoderReference* decoder_reference = nullptr;  // a decoder's float reference measured by the caller

  // budget.cpp
  void spend(const std::string& stage, const std::string& mode, double seconds);
  double remaining_s() const;
  bool budget_spent() const;
  // Seconds the next latency measurement may take: kMeasurementBudget (more when {duration_s} asks for
  // more), and under {budget_s} its share of what is left, half of it kept for building and evaluating.
  double measurement_budget() const;
  void note(std::string text);
};

// Runs f() and books its seconds to (stage, mode).
template <class F>
auto timed(Context& c, const std::string& stage, const std::string& mode, F&& f) {
  auto t = Clock::now();
  struct Book {
    Context& c;
    const std::string& stage;
    const std::string& mode;
    Clock::time_point t;
    ~Book() { c.spend(stage, mode, seconds_since(t)); }
  } book{c, stage, mode, t};
  return f();
}

// A built candidate.
struct Built {
  std::string file;           // the serialized module
  torch::jit::Module module;  // loaded back from it (evaluation)
  uint64_t bytes = 0;
  nlohmann::json details;
  std::vector<FloatRegion> float_regions;  // modules the build kept float (see specialize.cpp)
  double build_s = 0, calib_s = 0;         // seconds building (calibration excluded) and calibrating
  nlohmann::json steps;                     // seconds per build step (clone, specialize, calibrate, ...)
};

// ---- inputs.cpp -------------------------------------------------------------------------------

// The model's layers, checked: a model with nothing to quantize, or a glob that matches no layer, is an input error.
void find_model_layers(const model::LoadedModel& source, const QuantizeOptions& o, QuantizeResult& r);
// {calib} and {eval}, each checked against the model before any work.
void load_data(Context& c);
// Reads the calibration JSON of an earlier run (calib_stats) for reuse; warns when it was made for another model.
CalibrationStats read_calibration_stats(const std::filesystem::path& path, const model::LoadedModel& source,
                                        QuantizeResult& r);

// What calibrates static mode when {calib} is not given: the first samples of {eval}, or for auto nothing (static is
// then skipped with `problem`); an explicit static mode without data is an option error.
struct CalibrationFallback {
  std::optional<model::Dataset> from_eval;
  std::string problem;
};
CalibrationFallback calibration_fallback(const Context& c, bool wants_static, bool reused, const ModeEntry& requested,
                                         QuantizeResult& r);
// Samples per calibration forward pass for `data`.
int64_t calibration_batch(const model::Dataset* data, int64_t eval_batch);
// The calibrator static mode uses, when there is calibration data or reused statistics: c.calibrator.
void set_up_calibrator(Context& c, const model::Dataset* calib_data, const std::optional<CalibrationStats>& reused,
                       const CalibMethodEntry& method);

// ---- mode_plans.cpp ---------------------------------------------------------------------------

// The modes to try: the requested one, or every mode for auto.
std::vector<const ModeEntry*> modes_to_try(const ModeEntry& requested);

struct Planned {
  std::vector<std::pair<const ModeEntry*, Plan>> plans;
  std::vector<std::pair<const ModeEntry*, std::string>> skipped;  // mode, why
  // Auto: the plan of the mode skipped only for want of calibration data (static), for static_probe.cpp.
  std::optional<std::pair<const ModeEntry*, Plan>> uncalibrated = {};
};
// A plan per mode that applies; for auto, the others are recorded with the reason. An explicit mode that
// cannot apply is an input error.
Planned plan_modes(const std::vector<const ModeEntry*>& todo, const ModeEntry& requested, const QuantizeOptions& o,
                   const QuantizeResult& r, const model::LoadedModel& source, const std::string& calib_problem);
// The plans in the result (a dry run shows them), and each mode that does not apply as a candidate with its reason.
void record_plans(const Planned& planned, QuantizeResult& r);

// ---- references.cpp ---------------------------------------------------------------------------

// What quality is judged on (eval, else calib, else random inputs), the float model's outputs and metric on
// it, the frozen float baseline, the timing inputs per batch size, and the as-given float latency.
void prepare_references(Context& c, QuantizeResult& r);
Latency to_latency(int64_t batch, const measure::LatencySamples& s);

// ---- quality.cpp ------------------------------------------------------------------------------

// The float model's outputs on samples [begin, end) of what is judged; runs it on the samples it has not run yet.
// Its first run decides how many samples are judged.
torch::Tensor float_reference(Context& c, int64_t begin, int64_t end);
// The samples every candidate is judged on (decided by the float model's first chunk, which never runs past
// {eval_samples}).
int64_t judged_total(Context& c);
// A candidate's quality on the judged samples, evaluated chunk by chunk (judging.hpp). With `stop_over` (auto), it
// stops once the drop cannot fit that tolerance. Its forward seconds are booked to ("evaluation", `book_as`) unless
// `book_as` is empty (the caller's stage holds them); the float model's go to ("evaluation", "float").
Quality measure_quality(Context& c, torch::jit::Module& m, Progress& progress, const std::string& book_as,
                        std::optional<double> stop_over = std::nullopt);

// ---- budget.cpp -------------------------------------------------------------------------------

// Says up front what the run will measure and about how long it will take, from what the float model cost so far.
void announce_plan(const Context& c, const QuantizeResult& r, size_t modes, int64_t calib_samples);

// ---- candidates.cpp ---------------------------------------------------------------------------

// Builds a plan (scheme build, then serialized and loaded back, as a consumer gets it). Regions that a
// build keeps float are remembered, so later builds need not rediscover them.
Built build(Context& c, const ModeEntry& mode, const Plan& plan, bool decoder = false);
// Runs `work` on a candidate; a failure of the mode's model is recorded as the candidate's problem (auto) or ends the
// run (an explicit mode) with the reason.
void guarded(Context& c, const ModeEntry& requested, Candidate& cand, const std::function<void()>& work);
// For an explicit mode whose model fails where the scheme would not be tried on this CPU (bf16 where oneDNN has no
// bf16 ISA, as under ONEDNN_MAX_CPU_ISA=AVX2): the kernels it lacks, for the error; "" when the CPU has them.
std::string missing_kernels(const ModeEntry& mode);
// Times a built candidate against frozen float on a fresh copy of it.
void time_candidate(Context& c, Candidate& cand, const Built& b, bool stop_when_slower);
// Every planned mode built (and for an explicit mode judged and timed; auto judges later). Under {budget_s}, auto
// does not try the modes it has no time left for.
std::map<std::string, Built> build_candidates(Context& c, const Planned& planned, const ModeEntry& requested,
                                              QuantizeResult& r);

// ---- tolerance_search.cpp ---------------------------------------------------------------------

// Keeps the most sensitive layers in float until the drop fits the tolerance (tolerance.hpp's search) and
// replaces the candidate's plan, module and quality with the configuration the search chose.
void search_tolerance(Context& c, const ModeEntry& mode, double tolerance, const std::vector<LayerInfo>& layers,
                      const std::string& engine, Candidate& cand, Built& b);

// ---- auto_judging.cpp -------------------------------------------------------------------------

// Auto, second pass: judges the built candidates in the order the choice prefers.
void judge_candidates(Context& c, const ModeEntry& requested, QuantizeResult& r, std::map<std::string, Built>& built);

// ---- static_probe.cpp -------------------------------------------------------------------------

// Auto without calibration data, when no candidate is faster than frozen float: the mode that needs the data
// (planned.uncalibrated) built on a few random inputs and timed, speed only, into r.uncalibrated.
void probe_uncalibrated(Context& c, const Planned& planned, QuantizeResult& r);

// ---- write_artifact.cpp -----------------------------------------------------------------------

// Picks the candidate (choice.cpp), writes its artifact (and the calibration sidecar) after the last
// interruption point; returns the chosen candidate.
const Candidate& write_chosen(Context& c, QuantizeResult& r, const std::map<std::string, Built>& built,
                              const CalibMethodEntry& method, const std::optional<CalibrationStats>& reused);

}  // namespace lite::quantize

#pragma once
// lite quantize: the library verb. Torch-free: the CLI fills QuantizeOptions (options.hpp), calls run(), and
// prints to_report(result). run() never prints and never exits; it throws OptionError / InputError for bad
// options and inputs (nothing written) and returns a result whose `gates` say whether a gate failed
// (artifact still written).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/gates.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"
#include "lite/core/run_context.hpp"
#include "lite/measure/agreement.hpp"
#include "lite/measure/machine_load.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/quantize/decoder_result.hpp"
#include "lite/quantize/options.hpp"
#include "lite/quantize/plan.hpp"
#include "lite/quantize/tolerance.hpp"

namespace lite::quantize {

// The tolerance auto mode applies when --tolerance is not given (points).
inline constexpr double kAutoTolerance = 1.0;

struct Latency {
  int64_t batch = 0;
  double median_ms = 0, p90_ms = 0;
  int64_t iterations = 0;
  std::vector<double> samples_ms;
};

struct Speed {
  // Candidate vs the frozen float model, timed interleaved at each batch size.
  std::vector<Latency> candidate, frozen_float;
  std::vector<double> ratio;                  // median(candidate) / median(frozen) per batch
  std::vector<double> ratio_low, ratio_high;  // 95% bootstrap interval of the ratio
  bool slower = false;                        // slower than frozen float at some batch (interval above 1)
  std::vector<bool> implausible;              // per batch: a speedup beyond belief (profile/speed_claim.hpp)
};

struct Quality {
  std::string metric;  // "top-1 accuracy" (labels) or "top-1 agreement" (no labels)
  std::string data;    // the file evaluated on ("random inputs" when none)
  int64_t samples = 0;            // judged on: the first `samples` of the data (judging.hpp)
  int64_t available_samples = 0;  // in the data
  // The candidate's drop was over the tolerance at the low end of its 99% interval after `samples`, so the rest
  // were not evaluated (judging.hpp's cannot_meet).
  bool stopped_early = false;
  double float_value = 0;               // percent, on the same samples
  double value = 0;                     // percent
  double drop = 0;                      // points: float_value - value
  double drop_low = 0, drop_high = 0;   // 95% interval of the drop (Wilson interval of value)
  measure::Agreement agreement;         // against the float model's outputs
};

struct Candidate {
  std::string mode;
  bool built = false;
  std::string problem;  // why the mode was not built or failed
  Plan plan;
  uint64_t file_bytes = 0;
  Quality quality;
  Speed speed;
  bool meets_tolerance = true;
  // false: timed first and found slower than frozen float while an earlier candidate met the tolerance and
  // was not, so it could not be chosen and its quality was not measured (quality is empty)
  bool evaluated = true;
  std::optional<SearchResult> search;  // the tolerance search, when one ran
  bool chosen = false;
  double build_s = 0;
  nlohmann::json build_steps_s;  // seconds per build step; in the report, never in the artifact
};

// Auto without calibration data, when no candidate it could build is faster than frozen float: static int8, the
// mode that needs the data, built once on a few random inputs and timed against frozen float (static_probe.cpp). A
// speed-only figure: never judged for quality, never chosen, never written; when it pays (choice.hpp's
// uncalibrated_pays) the headline and the findings say that {calib} is the missing piece.
struct UncalibratedProbe {
  std::string mode;           // "static"
  int64_t calib_samples = 0;  // random inputs it was calibrated on
  Speed speed;
  double speed_score = 0;     // its latency relative to frozen float (choice.hpp's speed_score)
  double chosen_score = 0;    // the chosen candidate's, at the same batch sizes
  bool pays = false;
  std::string problem;        // why it could not be built or timed ("" when it was)
};

struct CalibrationInfo {
  std::string method;
  std::string source;  // --calib file, --calib-stats file, or the --eval file used instead
  int64_t samples = 0;
  bool reused = false;     // ranges came from --calib-stats
  std::string stats_file;  // where this run wrote its calibration JSON
  int64_t observed_values = 0;
};

// Where the command's time went: stage ("load", "build", "calibration", "evaluation", "timing", ...) and the
// mode it was spent on ("float" for the reference model, "" for shared work: loading, writing).
struct TimeSpent {
  std::string stage;
  std::string mode;
  double seconds = 0;
};

struct QuantizeResult {
  std::string model;
  uint64_t model_bytes = 0;
  std::string requested_mode;
  std::string mode;    // the mode of the artifact (auto's choice)
  std::string engine;  // quantized engine used; the consumer must select the same
  int threads = 0;
  bool dry_run = false;
  std::vector<LayerInfo> layers;
  std::vector<FloatOnlyLayer> float_only_layers;  // Embedding, LSTM, GRU: listed, not quantized
  std::string guessed_inputs;                     // "1x1x28x28" when lite inferred the input shape, else ""
  std::vector<Plan> plans;            // dry-run: the plan of each mode considered
  std::vector<Candidate> candidates;  // every mode tried (one unless auto)
  std::optional<CalibrationInfo> calibration;
  std::vector<Latency> float_latency;  // the model as given (unfrozen)
  std::string output;                  // artifact written ("" for a dry run)
  uint64_t output_bytes = 0;
  double tolerance = 0;
  bool tolerance_given = false;
  bool tolerance_met = true;
  bool slower = false;
  bool allow_slower = false;
  measure::MachineLoad load;  // around every latency measurement (profile/machine_load.hpp)
  bool allow_noisy = false;
  Gates gates;  // "tolerance", "speed": the CLI exits 1 (the artifact is still written)
  std::vector<std::string> notes;
  std::vector<report::Finding> findings;
  double wall_s = 0;
  std::vector<TimeSpent> time;       // where wall_s went
  std::optional<double> budget_s;    // the {budget_s} given
  double agreement_floor = 0;        // points; applied to an explicit mode given no tolerance
  bool agreement_floor_applied = false;
  std::optional<DecoderQuantizeResult> decoder;  // a decoder's run (docs/llm.md): its candidates in its own terms
  std::optional<UncalibratedProbe> uncalibrated = {};  // static int8 timed without calibration data (auto)
};

void to_json(nlohmann::json& j, const Latency& l);
void to_json(nlohmann::json& j, const Speed& s);
void to_json(nlohmann::json& j, const Quality& q);
void to_json(nlohmann::json& j, const Candidate& c);
void to_json(nlohmann::json& j, const CalibrationInfo& c);
void to_json(nlohmann::json& j, const UncalibratedProbe& p);
void to_json(nlohmann::json& j, const TimeSpent& t);
void to_json(nlohmann::json& j, const QuantizeResult& r);

// `context`: how it was invoked, recorded in the artifact (lite/core/run_context.hpp).
QuantizeResult run(const QuantizeOptions& options, Progress& progress, const RunContext& context = {});

struct DecoderReference;  // decoder_quantize.hpp
// A decoder quantized against the frozen float reference its caller already measured (lite optimize's decoder
// search builds every mode against one): the run neither freezes, times nor scores float itself.
QuantizeResult run(const QuantizeOptions& options, Progress& progress, const RunContext& context,
                   const DecoderReference& reference);

report::Report to_report(const QuantizeResult& result);

}  // namespace lite::quantize

#pragma once
// lite quantize's options (the options pattern of lite/core/options.hpp). Keys are the field names; the CLI
// binds its flags straight onto these fields. Torch-free.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/llm/decoder_knobs.hpp"
#include "lite/llm/kv_whatif_bound.hpp"
#include "lite/measure/timing_options.hpp"
#include "lite/model/eval_data.hpp"
#include "lite/model/input_spec.hpp"

namespace lite::quantize {

// eval, labels, eval_batch and inputs are the shared evaluation-data fragment (model/eval_data.hpp).
struct QuantizeOptions : model::EvalData {
  std::filesystem::path model;
  std::filesystem::path output;  // empty: MODEL.<tag>.pt beside the model
  std::string mode = "auto";
  std::optional<std::filesystem::path> calib;  // calibration data (static)
  int64_t calib_samples = 256;                 // first N samples of calib
  std::string calib_method = "mse";
  std::optional<std::filesystem::path> calib_stats;  // reuse an earlier run's calibration JSON
  // Judge quality on the first N samples of the evaluation data. Unset: an explicit mode on all of them; auto on as
  // many as the float model evaluates in kJudgeSeconds (judging.hpp), at least kMinJudgedSamples.
  std::optional<int64_t> eval_samples;
  std::optional<double> tolerance;                   // points of accuracy (or top-1 agreement) to give up
  std::vector<std::string> skip, only;               // layer-name globs
  std::string qengine = "onednn";
  std::vector<int64_t> batches = {1, 64};  // latency is measured at these batch sizes
  measure::TimingKnobs timing{/*warmup=*/5, /*iterations=*/{}, /*duration_s=*/1.0};
  bool dry_run = false;
  bool allow_slower = false;
  // The "speed" gate fails when the speed comparison ran on an oversubscribed machine or found an implausible
  // speedup (lite/measure/machine_load.hpp, speed_claim.hpp); this accepts such a timing.
  bool allow_noisy = false;
  bool write_calib_json = true;  // MODEL.<tag>.calib.json beside the artifact
  // An explicit mode given no tolerance still fails the "agreement" gate (exit 1, artifact written) when its
  // top-1 agreement with the float model falls by more than this many points (and on more than one sample).
  double agreement_floor = 5.0;
  // Seconds the whole command may take: measurements shrink (fewer calls, batch sizes skipped), auto skips
  // the modes it has no time left for, and the tolerance search stops early. Unset: each measurement
  // still keeps within kMeasurementBudget.
  std::optional<double> budget_s;
  llm::DecoderKnobs decoder;  // prompt_tokens, generate: a decoder's timing run (docs/llm.md)
  // A decoder's KV-cache what-if on the written mode (docs/llm.md): whether it runs (off: the cache's bytes per token
  // alone, from one prefill), and the seconds it may take (under {budget_s}, at most half of what is left).
  bool kv_what_if = true;
  double kv_what_if_seconds = llm::kKvWhatIfSeconds;
};

// Seconds one latency measurement (warm-up + timed calls of a candidate and the frozen float model) may
// take when no {budget_s} is given (or more when {duration_s} asks for more): measure::kMeasurementBudget.
using measure::kMeasurementBudget;

void to_json(nlohmann::json& j, const QuantizeOptions& o);
void from_json(const nlohmann::json& j, QuantizeOptions& o);
// Value rules and output-path rules, before any work: OptionError naming the key.
void validate(const QuantizeOptions& o);
// The rules of a decoder's run: no calibration or single-forward inputs, no static mode.
void validate_decoder(const QuantizeOptions& o);
// The artifact path: `output`, or MODEL.<mode tag>.pt beside the model.
std::filesystem::path output_path(const QuantizeOptions& o, const std::string& mode_tag);

}  // namespace lite::quantize

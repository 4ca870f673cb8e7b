#pragma once
// lite profile's options (the options pattern of lite/core/options.hpp). Torch-free: the CLI fills
// ProfileOptions from flags without seeing a torch header; the result records are in profile/result.hpp.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/options.hpp"
#include "lite/llm/decoder_knobs.hpp"
#include "lite/measure/timing_options.hpp"
#include "lite/model/eval_data.hpp"
#include "lite/model/input_spec.hpp"

namespace lite::profile {

// lite profile's options (see lite/core/options.hpp for the pattern). Keys are the field names; eval, labels,
// eval_batch and inputs are the shared evaluation-data fragment (model/eval_data.hpp).
struct ProfileOptions : model::EvalData {
  std::vector<std::filesystem::path> models;  // one model, or two for an A/B comparison (A = baseline)
  std::vector<std::filesystem::path> input_files;  // a tensor file per input
  std::optional<int64_t> batch;           // replaces the leading dimension of every input; unset keeps the shapes
  measure::TimingKnobs timing;                     // warmup 20 (the profiling executor specializes in the first 2), 2 s
  std::string qengine = "onednn";         // quantized engine for quantized models
  bool ops = false;                       // per-operator breakdown
  int top = 15;                           // rows in the per-op tables
  int op_iterations = 20;                 // iterations profiled with operator callbacks
  std::filesystem::path chrome_trace;          // Chrome trace (chrome://tracing, Perfetto) of the profiled iterations
  std::vector<double> qps;                // load mode: offered rates (requests/s), one run each
  int64_t requests = 0;                   // requests per load run
  uint64_t seed = 1;                      // inputs and arrivals are seeded
  std::optional<double> budget_s;         // seconds the timed measurement may take; unset: measure::kDefaultProfileBudget
                                          // (no limit when iterations is given)
  // Decoders (docs/llm.md): any of these, or a model whose forward takes a KV cache, profiles generation.
  llm::DecoderKnobs decoder;              // prompt_tokens, generate (the --prompts file's rows give the length)
  std::filesystem::path prompts;          // int64 token ids [N, T] (tensor file, .npy): the first batch of rows
  std::filesystem::path prefill_cost_out; // write the prefill-cost table cache-sim --prefill-cost-from reads
  bool decoder_asked() const { return decoder.given() || !prompts.empty() || !prefill_cost_out.empty(); }
};
void to_json(nlohmann::json& j, const ProfileOptions& o);
void from_json(const nlohmann::json& j, ProfileOptions& o);
// Value rules, before any work: OptionError naming the key. Also checks that the trace's folder exists.
void validate(const ProfileOptions& o);
measure::TimingOptions timing_of(const ProfileOptions& o);
// The rules of a decoder's run (one model, no single-forward options), checked by validate() when a decoder option
// is given and by run() when the model turns out to be a decoder.
void validate_decoder(const ProfileOptions& o);

}  // namespace lite::profile

#pragma once
// Inside lite run: how each verb runs as a step (runner_steps.cpp, one table), the evaluation of the final
// artifact against the original (evaluate.cpp), and the gates (gates.cpp).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lite/core/gates.hpp"
#include "lite/core/options.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"
#include "lite/core/stats.hpp"
#include "lite/cache/cache_sim.hpp"
#include "lite/profile/options.hpp"
#include "lite/profile/result.hpp"
#include "lite/prune/decoder_result.hpp"
#include "lite/recipe/runner.hpp"

namespace lite::recipe::detail {

struct StepContext {
  std::string prefix;                  // "steps[2].quantize."
  std::filesystem::path artifact_path; // where a model-writing step writes
  RunContext run_context;              // lite run's own: every step's artifact records it
  bool check_only = false;             // read and validate the options, run nothing
  bool allow_noisy = false;            // lite run --allow-noisy: passed to the steps whose verb has the option
  Progress* progress = nullptr;
};

struct StepOutcome {
  report::Report report;
  Gates gates;
  std::string artifact;
  nlohmann::json options;  // as run
  std::optional<cache::CacheSimResult> cache_sim;  // a cache-sim step's result (the cache gates read it)
};

using StepRunner = StepOutcome (*)(const nlohmann::json& options, const StepContext& context);
// The runner of a step verb (one with a recipe_step, lite/core/verb.hpp); InternalError for any other name.
StepRunner step_runner(const std::string& verb);

// Runs f(); an OptionError comes back under `prefix` ("steps[2].quantize."), its {key} references worded as
// key paths too.
void under_prefix(const std::string& prefix, const std::function<void()>& f);

// Reads a verb's options from a step's JSON, errors under the step's key path.
template <class Options>
Options read_options(const nlohmann::json& j, const std::string& prefix) {
  Options o;
  under_prefix(prefix, [&] { from_json(j, o); });
  return o;
}

// The original model frozen (torch::jit::freeze), written
// into the work folder; the model itself when it does not freeze (noted).
std::filesystem::path frozen_original(const Recipe& recipe, const std::filesystem::path& work_dir,
                                      const std::string& command_line, std::vector<std::string>& notes);

// lite profile's options of the evaluation (recipe "evaluate"), comparing `baseline` (A) with `candidate` (B).
nlohmann::json evaluation_options(const Recipe& recipe, const std::string& baseline, const std::string& candidate);
// Validates them (check_only: returns nothing) or runs the comparison through the profile core.
std::optional<profile::ProfileResult> evaluate(const nlohmann::json& options, bool check_only, Progress& progress);

// The speedup gate's baseline, the fastest float model libtorch offers: the original frozen and optimized for
// inference in memory (that graph cannot be saved, so the profile comparison, which times files, cannot use it),
// timed interleaved with the final artifact on the evaluation's inputs. Unset (noted) when it does not freeze.
// `load` becomes the busier of itself and the load seen around this timing.
std::optional<stats::Interval> speedup_over_fastest_float(const Recipe& recipe, const std::string& candidate,
                                                          const nlohmann::json& options,
                                                          const profile::ProfileResult& evaluation,
                                                          std::vector<std::string>& notes, Progress& progress,
                                                          measure::MachineLoad& load);

// A decoder recipe's evaluation (evaluate_decoder.cpp): the final artifact against the frozen original in the
// decoder's terms.
struct DecoderEvaluation {
  std::string quality_data;  // what quality was judged on
  bool real_tokens = false;  // held-out token ids (perplexity means something), not seeded random sequences
  int64_t scored_tokens = 0, prompt_tokens = 0, generated_tokens = 0;
  int threads = 0;
  prune::DecoderFigures original, final_model;  // agreement and perplexity, speed (the faster of two rounds), bytes
  measure::MachineLoad load;
  std::vector<std::string> notes;
  // Quality lost as lite quantize counts it: perplexity increase in % on real tokens, else the % of next tokens
  // that changed.
  double quality_loss_pct() const;
};
void to_json(nlohmann::json& j, const DecoderEvaluation& e);
// Whether the recipe's model is a decoder lite drives (its forward takes a KV cache; llm::takes_kv_cache).
bool is_decoder_recipe(const Recipe& recipe);
// The evaluation's options as a decoder's (lite profile's keys), before any step: OptionError under "evaluate.".
void check_decoder_evaluation(const Recipe& recipe);
DecoderEvaluation evaluate_decoder(const Recipe& recipe, const std::filesystem::path& baseline,
                                   const std::string& candidate, Progress& progress);

// What the gates read: the comparison of the final artifact with the original, the last cache-sim step.
struct Measured {
  std::optional<profile::ProfileResult> evaluation;
  std::optional<DecoderEvaluation> decoder;  // instead of `evaluation` for a decoder recipe
  std::optional<stats::Interval> speedup;  // over the fastest float original (see speedup_over_fastest_float)
  std::optional<cache::CacheSimResult> cache_sim;
  std::string cache_sim_step;    // its key path
  uint64_t final_bytes = 0;      // the final model's file size (before the recipe's provenance is added)
  measure::MachineLoad load;     // around the evaluation's timings (profile/machine_load.hpp)
  bool allow_noisy = false;      // speed gates accept an untrusted timing (RunOptions::allow_noisy)
};
// Measures every gate the recipe sets and the steps' own gates into result.gates_checked / result.gates.
void check_gates(RunResult& result, const Measured& measured);

// Writes the final artifact: the last step's model with the recipe, steps and gates in its lite.json.
void write_final_artifact(const RunResult& result, const std::filesystem::path& artifact,
                          const RunContext& context);

}  // namespace lite::recipe::detail

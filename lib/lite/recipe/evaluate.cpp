// The measurements behind lite run's model gates, and the final artifact. The final artifact is compared with the
// original through the profile core (lite profile A B: interleaved timing, speedup with a bootstrap interval,
// output agreement, accuracy with labels, p99) on the recipe's evaluation data, with the original frozen first
// (torch::jit::freeze) and saved to the work folder, since the profile core times files. The speedup gate's
// baseline is the fastest float model libtorch offers, the one every verb's speed figures use: the original
// frozen and optimized for inference in memory (that graph cannot be saved: its MKLDNN weights are not
// serialized), timed interleaved with the final artifact on the same inputs. The final artifact is the last
// step's model saved again with the recipe, the steps and the gate results added to its lite.json (the step's
// own provenance kept under "history").
#include <torch/jit.h>
#include <torch/script.h>

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/stats.hpp"
#include "lite/measure/frozen_float.hpp"
#include "lite/measure/timing.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/load.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/profile/profile.hpp"
#include "lite/recipe/runner_internal.hpp"

namespace lite::recipe::detail {

namespace fs = std::filesystem;

fs::path frozen_original(const Recipe& recipe, const fs::path& work_dir, const std::string& command_line,
                         std::vector<std::string>& notes) {
  model::LoadedModel original = model::load_model(recipe.model);
  torch::jit::Module frozen;
  try {
    torch::NoGradGuard no_grad;
    torch::jit::Module m = original.module.clone();
    m.eval();
    frozen = torch::jit::freeze(m);
  } catch (const std::exception& e) {
    notes.push_back(fmt::format("the original does not freeze ({}); gates compare against it unfrozen",
                                model::torch_error_reason(e)));
    return recipe.model;
  }
  const fs::path path = work_dir / "original.frozen.pt";
  model::ArtifactInfo info;
  info.transform = "freeze";
  info.command_line = command_line;
  info.details = {{"why", "the baseline of lite run's gates: the original after torch::jit::freeze"}};
  info.inputs = original.declared_inputs;
  model::save_artifact(frozen, path, original, info);
  return path;
}

nlohmann::json evaluation_options(const Recipe& recipe, const std::string& baseline, const std::string& candidate) {
  nlohmann::json o = recipe.evaluate;
  o["models"] = {baseline, candidate};
  return o;
}

std::optional<profile::ProfileResult> evaluate(const nlohmann::json& options, bool check_only, Progress& progress) {
  auto o = read_options<profile::ProfileOptions>(options, "evaluate.");
  under_prefix("evaluate.", [&] { profile::validate(o); });
  if (check_only) return std::nullopt;
  return profile::run(o, progress);
}

std::optional<stats::Interval> speedup_over_fastest_float(const Recipe& recipe, const std::string& candidate,
                                                          const nlohmann::json& options,
                                                          const profile::ProfileResult& evaluation,
                                                          std::vector<std::string>& notes, Progress& progress,
                                                          measure::MachineLoad& load) {
  auto o = read_options<profile::ProfileOptions>(options, "evaluate.");
  model::LoadedModel original = model::load_model(recipe.model);
  model::LoadedModel final_model = model::load_model(candidate);
  std::vector<torch::Tensor> inputs;
  for (const auto& spec : evaluation.inputs) inputs.push_back(model::random_input(spec, o.seed));
  torch::jit::Module fastest;
  try {
    measure::FrozenFloat frozen = measure::frozen_float(original.module, inputs);
    fastest = frozen.module;
    if (!frozen.note.empty()) notes.push_back("min_speedup: " + frozen.note);
  } catch (const std::exception& e) {
    notes.push_back(fmt::format("min_speedup: the original does not freeze and optimize ({}); the speedup is against "
                                "the frozen file",
                                model::torch_error_reason(e)));
    return std::nullopt;
  }
  measure::LoadWatch watch(evaluation.threads);
  auto [a, b] = measure::time_interleaved(fastest, recipe.model, final_model.module, candidate, inputs,
                                          profile::timing_of(o), progress);
  const measure::MachineLoad seen = watch.result();
  if (seen.other_runnable_threads > load.other_runnable_threads || load.samples == 0) load = seen;
  return stats::bootstrap_median_ratio(a.ms, b.ms);
}

void write_final_artifact(const RunResult& r, const fs::path& artifact, const RunContext& context) {
  const StepRecord& last = r.steps.at(size_t(r.recipe.last_model_step()));
  model::LoadedModel source = model::load_model(last.artifact);
  model::ArtifactInfo info;
  info.transform = "run";
  info.command_line = context.command_line;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : r.steps)
    steps.push_back({{"step", s.key_path}, {"artifact", s.artifact}, {"gates", s.gates}, {"seconds", s.seconds}});
  info.details = {{"recipe", r.recipe.document},
                  {"recipe_file", r.recipe.file.string()},
                  {"recipe_name", r.recipe.name},
                  {"status", r.gates.passed() ? "passed" : "failed"},
                  {"failed_gates", r.gates.failed},
                  {"gates", r.gates_checked},
                  {"steps", steps}};
  // The evaluation without its raw timing samples (they stay in the JSON report).
  nlohmann::json evaluation = r.evaluation;
  if (evaluation.is_object() && evaluation.contains("models"))
    for (auto& m : evaluation["models"]) {
      m.erase("samples_ms");
      m.erase("warmup_samples_ms");
    }
  info.figures = {{"evaluation", evaluation}};
  info.inputs = source.declared_inputs;
  model::save_artifact(source.module, artifact, source, info);
}

}  // namespace lite::recipe::detail

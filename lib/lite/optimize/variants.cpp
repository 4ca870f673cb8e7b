// Building the variants of lite optimize's search through the verbs themselves: prune::run for the pruned bases
// and quantize::run for each mode, so a variant is exactly what `lite prune` and `lite quantize` would write; a
// float variant is its base frozen (torch::jit::freeze), the form it is timed and shipped in.
#include <torch/jit.h>

#include <fmt/format.h>

#include <chrono>

#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/distill/distill.hpp"
#include "lite/core/environment.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/optimize/search_internal.hpp"
#include "lite/optimize/verb.hpp"
#include "lite/prune/prune.hpp"
#include "lite/quantize/quantize.hpp"
#include "lite/quantize/scheme.hpp"

namespace lite::optimize::detail {

std::string mode_cpu_problem(const OptimizeOptions& o, const std::string& mode) {
  if (mode == "float" || o.modes != OptimizeOptions{}.modes) return {};
  return quantize::find_mode(mode).scheme->cpu_problem(cpu_rule_environment());
}

namespace fs = std::filesystem;

namespace {

// The verbs time their result briefly (the search measures every variant its own way, the same for all).
constexpr int kVerbWarmup = 1;
constexpr int kVerbIterations = 3;
// Training samples distill's best epoch is chosen on.
constexpr int64_t kRecoverySelectionSamples = 1024;

}  // namespace

PrunedBase build_pruned(const VariantSpec& family, const BuildSettings& s, const WorkFolder& folder,
                        const nlohmann::json& settings, Progress& progress, bool& reused) {
  const VariantSpec spec{family.prune_ratio, "base", false, family.by_sensitivity};
  const std::string key = WorkFolder::key(spec, settings);
  const fs::path artifact = folder.artifact(key);
  if (auto record = folder.read(key, "build"); record && fs::exists(artifact)) {
    reused = true;
    return {artifact, record->value("layer_ratios", nlohmann::json())};
  }
  const OptimizeOptions& o = *s.options;
  prune::PruneOptions p;
  p.model = o.model;
  p.output = artifact;
  if (family.by_sensitivity) {
    p.tolerance = accuracy_budget(o);  // each group's largest ratio within the budget, judged alone on eval
    p.eval = o.eval;
    p.labels = o.labels;
  } else {
    p.ratio = family.prune_ratio;
  }
  p.inputs = s.inputs;
  p.batches = {s.options->batch};
  p.timing = {kVerbWarmup, kVerbIterations, /*duration_s=*/1.0, s.options->threads};
  p.agreement_floor = 100;  // the search judges accuracy itself, on the evaluation data
  prune::validate(p);
  const auto start = std::chrono::steady_clock::now();
  const prune::PruneResult r = prune::run(p, progress, *s.context);
  const nlohmann::json layer_ratios = family.by_sensitivity ? nlohmann::json(r.suggested) : nlohmann::json();
  folder.write(key, "build", {{"artifact", artifact.string()}, {"seconds", seconds_since(start)},
                              {"parameters_after", r.after.parameters}, {"macs_after", r.after.macs},
                              {"layer_ratios", layer_ratios}});
  return {artifact, layer_ratios};
}

fs::path build_recovered(const VariantSpec& family, const fs::path& pruned, const BuildSettings& s,
                         const WorkFolder& folder, const nlohmann::json& settings, Progress& progress, bool& reused) {
  const VariantSpec spec{family.prune_ratio, "base", true, family.by_sensitivity};
  const std::string key = WorkFolder::key(spec, settings);
  const fs::path artifact = folder.artifact(key);
  if (auto record = folder.read(key, "build"); record && fs::exists(artifact)) {
    reused = true;
    return artifact;
  }
  const OptimizeOptions& o = *s.options;
  distill::DistillOptions d;
  d.teacher = o.model;
  d.student = pruned;
  d.data = *o.data;
  d.data_labels = o.data_labels;
  // The best epoch is picked on training samples: the evaluation data judges the search, it must not also pick.
  d.eval = d.data;
  d.eval_labels = d.data_labels;
  d.eval_samples = kRecoverySelectionSamples;
  d.samples = o.recover_samples;
  d.epochs = o.recover_epochs;
  d.threads = o.threads;
  d.latency_iterations = 0;
  d.output = artifact;
  distill::validate(d);
  const auto start = std::chrono::steady_clock::now();
  const distill::DistillResult r = distill::run(d, progress, *s.context);
  folder.write(key, "build", {{"artifact", artifact.string()}, {"seconds", seconds_since(start)},
                              {"best_epoch", r.best_epoch}});
  return artifact;
}

namespace {

void freeze_into(const fs::path& base, const fs::path& artifact, const std::string& command_line) {
  model::LoadedModel loaded = model::load_model(base);
  torch::jit::Module frozen;
  {
    torch::NoGradGuard no_grad;
    torch::jit::Module m = loaded.module.clone();
    m.eval();
    frozen = torch::jit::freeze(m);
  }
  model::ArtifactInfo info;
  info.transform = "freeze";
  info.command_line = command_line;
  info.details = {{"why", std::string("lite ") + verb().name + "'s float variant: the model frozen, as it is timed"}};
  info.inputs = loaded.declared_inputs;
  model::save_artifact(frozen, artifact, loaded, info);
}

void quantize_into(const std::string& mode, const fs::path& base, const fs::path& artifact, const BuildSettings& s,
                   Progress& progress) {
  quantize::QuantizeOptions q;
  q.model = base;
  q.output = artifact;
  q.mode = mode;
  if (mode == "static") q.calib = s.calib;
  q.calib_samples = s.options->calib_samples;
  q.inputs = s.inputs;
  q.batches = {s.options->batch};
  q.timing = {kVerbWarmup, kVerbIterations, /*duration_s=*/1.0, s.options->threads};
  q.write_calib_json = false;
  q.allow_slower = true;    // a slower variant loses on its own measured figures
  q.agreement_floor = 100;  // accuracy is judged by the search, on the evaluation data
  quantize::validate(q);
  quantize::run(q, progress, *s.context);
}

}  // namespace

void build_variant(Variant& v, const fs::path& base, const BuildSettings& s, const WorkFolder& folder,
                   Progress& progress) {
  const fs::path artifact = folder.artifact(v.key);
  v.artifact = artifact.string();
  if (auto record = folder.read(v.key, "build")) {
    if (record->value("status", "") == "failed") {
      v.status = "failed";
      v.reason = record->value("reason", "");
      v.reused = true;
      return;
    }
    if (fs::exists(artifact)) {
      v.file_bytes = fs::file_size(artifact);
      v.build_s = record->value("seconds", 0.0);
      v.reused = true;
      return;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    if (v.spec.mode == "float")
      freeze_into(base, artifact, s.context->command_line);
    else if (v.spec.mode == "static" && !s.calib)
      throw InputError("{calib}", "static int8 needs calibration data", "pass {calib} or {eval}");
    else
      quantize_into(v.spec.mode, base, artifact, s, progress);
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    // The verb refused this base in this mode (or freezing failed): a variant the search cannot have.
    v.status = "failed";
    v.reason = first_line(e.what());
    folder.write(v.key, "build", {{"status", "failed"}, {"reason", v.reason}});
    return;
  }
  v.build_s = seconds_since(start);
  v.file_bytes = fs::file_size(artifact);
  folder.write(v.key, "build", {{"status", "built"}, {"seconds", v.build_s}});
}

}  // namespace lite::optimize::detail

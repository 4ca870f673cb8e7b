#pragma once
// The torch side of lite optimize's search: building a variant's artifact with the verbs, and measuring it
// against the original (variants.cpp, measure.cpp). Internal to lib/lite/optimize.
#include <torch/script.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lite/core/progress.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/load.hpp"
#include "lite/optimize/optimize.hpp"
#include "lite/optimize/settle.hpp"
#include "lite/optimize/work_folder.hpp"

namespace lite::optimize::detail {

// ---- building (variants.cpp) ----

// Why a mode of the default {modes} list is not built on this CPU (quantize's Scheme::cpu_problem: bf16 without
// native bf16 runs emulated, many times slower than float), "" when it is built. Modes the user listed are built
// regardless, as an explicit quantize {mode} is.
std::string mode_cpu_problem(const OptimizeOptions& o, const std::string& mode);

// What every build shares: the options, where static int8 calibrates, the input shapes the verbs are given.
struct BuildSettings {
  const OptimizeOptions* options = nullptr;
  const RunContext* context = nullptr;          // how lite optimize was invoked: every variant records it
  std::optional<std::filesystem::path> calib;  // unset: static int8 cannot be built (no data)
  std::vector<model::InputSpec> inputs;         // at batch 1; empty: the verbs resolve them as usual
};

// A family's pruned model in the work folder, and the per-group ratios prune chose (by_sensitivity).
struct PrunedBase {
  std::filesystem::path path;
  nlohmann::json layer_ratios;
};
// The model as given pruned (prune's structured L1 pass) at spec's ratio, or at the per-group ratios its
// sensitivity analysis picks within the accuracy budget. Throws lite::Error when prune refuses the model.
PrunedBase build_pruned(const VariantSpec& spec, const BuildSettings& s, const WorkFolder& folder,
                        const nlohmann::json& settings, Progress& progress, bool& reused);
// The pruned model distilled from the original on {data} (lite distill, the best epoch by its loss on the first
// training samples: the evaluation data stays the search's judge); the record says where.
std::filesystem::path build_recovered(const VariantSpec& spec, const std::filesystem::path& pruned, const BuildSettings& s,
                                      const WorkFolder& folder, const nlohmann::json& settings, Progress& progress,
                                      bool& reused);
// The variant's artifact from its base (the model, or its pruned copy): frozen for "float", quantize's
// artifact for a mode. Sets artifact, file_bytes, build_s; status "failed" with the reason when the verb
// refuses the base (the search goes on without it).
void build_variant(Variant& v, const std::filesystem::path& base, const BuildSettings& s, const WorkFolder& folder,
                   Progress& progress);

// ---- measuring (measure.cpp) ----

// What every variant is judged against: the original's outputs (and accuracy) on the evaluation samples, the
// timing input at the target's batch size and the fastest float form of the original to time beside.
struct Reference {
  model::Dataset eval;             // the eval file, or seeded random inputs
  std::string eval_source;
  std::string metric;              // "top-1 accuracy" (labels) or "top-1 agreement"
  torch::Tensor outputs;           // the original's, on eval
  std::vector<torch::Tensor> timing_inputs;
  torch::jit::Module fastest_original;
  std::filesystem::path original_path;
  double baseline_p50_ms = 0;      // the fastest original's median at its first timing (0: not yet timed)
  double percent_on(int64_t samples) const;  // the original's accuracy (100 for agreement) on the first samples
  std::vector<double> correct;     // per sample, 1 when the original is right (labels)
};
Reference make_reference(model::LoadedModel& original, const OptimizeOptions& o, std::vector<std::string>& notes,
                         Progress& progress);

// The variant on the first `samples` evaluation samples (all when <= 0).
Quality measure_quality(torch::jit::Module& variant, const std::filesystem::path& path, const Reference& r,
                        int64_t samples, int64_t eval_batch, Progress& progress);
// The variant timed interleaved with the fastest original at the target's batch size for `duration_s`, or until
// `settle` (when given) says the timing has decided what it is for.
Latency measure_latency(torch::jit::Module& variant, const std::filesystem::path& path, Reference& r,
                        double duration_s, int warmup, const SettleRule* settle, Progress& progress);
// The fastest original timed alone.
Latency measure_original(Reference& r, double duration_s, int warmup, Progress& progress);

}  // namespace lite::optimize::detail

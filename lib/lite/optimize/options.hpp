#pragma once
// lite optimize's options (the options pattern of lite/core/options.hpp): the model, the data it is judged on,
// one latency target, the accuracy budget, the search space (prune ratios x quantization modes) and, with a
// request trace, the cache in front of the model. Torch-free.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/model/eval_data.hpp"
#include "lite/model/input_spec.hpp"

namespace lite::optimize {

// eval, labels, eval_batch and inputs are the shared evaluation-data fragment (model/eval_data.hpp).
struct OptimizeOptions : model::EvalData {
  std::filesystem::path model;
  std::filesystem::path output;                 // the chosen artifact; empty: MODEL.optimized.pt beside the model
  std::optional<std::filesystem::path> calib;   // static int8's calibration data; unset: eval
  int64_t calib_samples = 256;
  // One latency target, at `batch` (the batch size the service runs).
  std::optional<double> target_p99_ms;
  std::optional<double> target_p50_ms;
  std::optional<double> target_throughput;      // samples per second
  std::optional<double> target_speedup;         // x the frozen original's median latency
  int64_t batch = 1;
  std::optional<double> max_accuracy_drop;      // points; unset: kDefaultAccuracyDrop
  // The search space: every prune ratio (0, the model as given, is always in) x every mode.
  std::vector<double> prune_ratios = {0.25, 0.5};
  // Also prune at the per-group ratios lite prune's sensitivity analysis picks within the accuracy budget (each
  // group pruned alone at 0.1, 0.3, 0.5 and judged on eval; needs eval).
  bool prune_sensitivity = false;
  std::vector<std::string> modes = {"float", "static", "dynamic", "fp16", "bf16", "weight-int8"};
  // Recovery: with training data, every pruned model is distilled from the original (lite distill) before it is
  // quantized, so pruning is judged on what it keeps after recovery, not on the damage it does alone.
  std::optional<std::filesystem::path> data;
  std::optional<std::filesystem::path> data_labels;  // labels of an idx data file
  int recover_epochs = 2;
  int64_t recover_samples = 8192;                    // the first N training samples (0: all)
  // The cache in front of the model (p99/p50 targets): a request trace replayed through lite cache-sim's cost
  // model, each variant's measured latency paying for the misses.
  std::optional<std::filesystem::path> trace;
  std::string trace_format = "auto";
  uint32_t block_tokens = 0;                   // an LLM trace's tokens per KV block; 0 = the format's own
  std::optional<double> hit_latency_ms;
  std::vector<std::string> cache_policies = {"lru", "s3fifo", "wtinylfu"};
  std::string cache_sizes = "0.001,0.002,0.005,0.01,0.02,0.03,0.05,0.07,0.1,0.15,0.2,0.3,0.4,0.5,0.7,1";
  bool cache_objects = false;                   // size caches in objects, not bytes
  // The objective after the targets: unset costs minimise cache bytes, then mean latency.
  std::optional<double> cost_cache_gib;
  std::optional<double> cost_core_ms;
  // Measurement: every candidate is screened on a subset and a short timing, and measured fully only while it
  // can still win.
  int64_t screen_samples = 256;
  bool exhaustive = false;                      // measure every variant fully (the grid the search is checked against)
  double screen_duration_s = 0.3;              // at most: timing stops once settled (settle.hpp)
  double duration_s = 2.0;                     // at most, but for the exhaustive grid
  int warmup = 5;
  int threads = 0;                              // 0: libtorch's default
  std::optional<double> budget_s;               // seconds the whole search may take
  std::filesystem::path work_dir;               // empty: OUTPUT.work beside the output
  std::filesystem::path emit_recipe;            // a lite run recipe that rebuilds and gates the choice
  std::filesystem::path plot;                   // SVG of the frontier
};

// Points of accuracy (or top-1 agreement) the result may lose when max_accuracy_drop is not given.
inline constexpr double kDefaultAccuracyDrop = 1.0;

void to_json(nlohmann::json& j, const OptimizeOptions& o);
void from_json(const nlohmann::json& j, OptimizeOptions& o);
// Value rules and the file rule, before any work: OptionError naming the key.
void validate(const OptimizeOptions& o);

std::filesystem::path output_path(const OptimizeOptions& o);
std::filesystem::path work_dir(const OptimizeOptions& o);
double accuracy_budget(const OptimizeOptions& o);

// The one latency target given: its key ("target_p99_ms"), value, and what it measures.
struct Target {
  std::string key;
  double value = 0;
  int64_t batch = 1;
  std::string describe() const;  // "p99 <= 5 ms at batch 1"
  bool is_latency() const { return key == "target_p99_ms" || key == "target_p50_ms"; }
};
Target target_of(const OptimizeOptions& o);

}  // namespace lite::optimize

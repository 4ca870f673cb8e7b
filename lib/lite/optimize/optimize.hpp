#pragma once
// lite optimize: from a latency target to the cheapest measured configuration. The search builds model variants
// (structured prune ratio x quantization mode, float included) with the prune and quantize verbs, screens each on
// a subset of the evaluation data and a short timing, measures fully only those that can still win, sizes a cache
// for each with lite cache-sim's cost model when a request trace is given, and picks the cheapest that meets the
// target and the accuracy budget. Torch-free header: the CLI fills OptimizeOptions, calls run(), prints
// to_report(result).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/gates.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"
#include "lite/core/run_context.hpp"
#include "lite/measure/machine_load.hpp"
#include "lite/optimize/decoder_search.hpp"
#include "lite/optimize/options.hpp"

namespace lite::optimize {

// One point of the search space, in the order the levers apply: prune, then quantize.
struct VariantSpec {
  double prune_ratio = 0;      // 0: the model as given
  std::string mode = "float";  // "float" (frozen) or a quantize mode
  bool recovered = false;      // the pruned model distilled from the original before the mode applies
  // Pruned at per-group ratios lite prune's sensitivity analysis picks within the accuracy budget (prune_ratio 0).
  bool by_sensitivity = false;
  bool pruned() const { return prune_ratio > 0 || by_sensitivity; }
  std::string label() const;   // "prune 0.25 + static", "prune 0.5 (recovered) + float", "no pruning + float"
  std::string prune_family() const;  // "prune 0.25", "prune 0.5 (recovered)", "prune by sensitivity", "no pruning"
};

// Accuracy with labels, else top-1 agreement with the original, in percent, on `samples` samples.
struct Quality {
  std::string metric;      // "top-1 accuracy" or "top-1 agreement"
  int64_t samples = 0;
  double reference = 0;    // the original's value on the same samples (100 for agreement)
  double value = 0;
  double drop = 0;         // reference - value, points
  double drop_low = 0, drop_high = 0;  // 95% interval of the drop (Wilson interval of the value)
};

// The variant's forward latency at the target's batch size, timed interleaved with the frozen original.
struct Latency {
  int64_t calls = 0;
  double mean_ms = 0, p50_ms = 0, p99_ms = 0;
  double p99_low_ms = 0, p99_high_ms = 0;  // 95% interval of the p99 (binomial order statistics; the slowest call
                                           // bounds it from above when there are too few calls to say more)
  double original_p50_ms = 0;
  double speedup = 0, speedup_low = 0, speedup_high = 0;  // median(original) / median(variant), 95% bootstrap
  // The machine drifts between timings minutes apart (a 2-core VM ran 60% slower for one variant's second): the
  // figures above (mean, p50, p99 and its interval) are scaled to the machine's speed at the original's first
  // timing by this factor, the original's median then / its median timed beside this variant. 1: not scaled.
  double window_scale = 1;
  std::string note;
};

// The smallest cache (of the simulated sizes and policies) in front of the variant that meets the latency target.
struct CacheFit {
  bool reached = false;
  std::string policy;
  uint64_t size = 0;        // bytes (objects with cache_objects)
  std::string size_text;
  double hit_ratio = 0;
  double mean_ms = 0, p50_ms = 0, p99_ms = 0;  // request latency with the cache
  // The closest it came when not reached: the largest size's best p99 (or p50).
  double best_ms = 0;
};

struct Variant {
  VariantSpec spec;
  std::string key;           // the work folder's record name (model hash, spec, settings)
  std::string artifact;      // in the work folder
  nlohmann::json layer_ratios;  // by_sensitivity: the per-group ratios prune chose ([{glob, ratio}])
  uint64_t file_bytes = 0;
  // "measured", "screened out", "failed", "skipped" (its prune ratio lost the budget, or the budget ran out)
  std::string status;
  std::string reason;        // why it is not "measured"
  std::optional<Quality> screen_quality, quality;
  std::optional<Latency> screen_latency, latency;
  std::optional<CacheFit> cache;
  // Resident memory of the process while the variant was loaded and fully measured (its peak, VmHWM reset before
  // it), and before it was loaded: the difference is what the variant itself took. 0 where not measured.
  uint64_t peak_rss_bytes = 0, rss_before_bytes = 0;
  bool reused = false;       // its records came from the work folder
  double build_s = 0, screen_s = 0, measure_s = 0;
  // Judged (objective.cpp):
  bool meets_accuracy = false, meets_latency_alone = false, feasible = false;
  double cost = 0;           // the objective (lower wins); see objective.hpp
  bool on_frontier = false, chosen = false;
  std::string verdict;       // one line: why it won or lost
};

struct StageTime {
  std::string stage;  // "original", "build", "screen", "measure", "cache", "write"
  double seconds = 0;
};

struct OptimizeResult {
  std::string model, model_sha256;
  uint64_t model_bytes = 0;
  std::string input;         // the timing input, "1x1x28x28"
  Target target;
  double accuracy_budget = 0;
  std::string metric;        // of the budget: "top-1 accuracy" or "top-1 agreement"
  std::string eval_source;   // the eval file, or "random inputs"
  std::optional<Quality> original_quality;  // the original on the full eval (reference)
  std::optional<Latency> original_latency;  // the frozen original alone
  std::string objective;     // in words
  std::vector<Variant> variants;
  int proposed = 0, screened_out = 0, skipped = 0, failed = 0, measured = 0, reused = 0;
  std::optional<size_t> chosen;  // index into variants
  std::vector<std::string> family_verdicts;  // why each family without the choice lost
  std::vector<std::string> nearest_misses;   // when nothing meets the target
  std::string output, emitted_recipe, plot, work_dir;
  bool cache_searched = false;  // a trace was given: caches were sized
  std::string cache_unit;    // "bytes" or "objects"
  bool budget_exhausted = false;
  measure::MachineLoad machine_load;  // the most load seen over the search's timings
  std::vector<StageTime> time;
  double wall_s = 0;
  Gates gates;               // "target": nothing met the target and the budget (exit 1)
  std::vector<report::Finding> findings;
  std::vector<std::string> notes;
  // A decoder with an LLM request trace: weight modes x KV formats x prefix-cache sizes (decoder_search.hpp); the
  // fields above about variants stay empty.
  std::optional<DecoderSearch> decoder;
};

void to_json(nlohmann::json& j, const VariantSpec& s);
void to_json(nlohmann::json& j, const Quality& q);
void to_json(nlohmann::json& j, const Latency& l);
void to_json(nlohmann::json& j, const CacheFit& c);
void to_json(nlohmann::json& j, const Variant& v);
void to_json(nlohmann::json& j, const OptimizeResult& r);
void from_json(const nlohmann::json& j, Quality& q);
void from_json(const nlohmann::json& j, Latency& l);

// `context`: how it was invoked, recorded in the artifact (lite/core/run_context.hpp).
OptimizeResult run(const OptimizeOptions& options, Progress& progress, const RunContext& context = {});

report::Report to_report(const OptimizeResult& result);

}  // namespace lite::optimize

#pragma once
// lite profile's result records: what run() measured, per model and compared, as the report printers and
// --json read it. Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/cache/prefix/prefix_cache.hpp"
#include "lite/core/report.hpp"
#include "lite/core/stats.hpp"
#include "lite/llm/generation_stats.hpp"
#include "lite/measure/agreement.hpp"
#include "lite/measure/machine_load.hpp"
#include "lite/measure/timing_options.hpp"
#include "lite/model/facts.hpp"
#include "lite/model/input_spec.hpp"

namespace lite::profile {

// Per-operator totals over the profiled iterations, divided by their number (per-forward figures).
struct OpStat {
  std::string name;    // operator ("aten::conv2d") or module path ("features.0 (Conv2d)")
  int64_t calls = 0;   // per forward
  double self_ms = 0;  // per forward, excluding time in nested operators
  double total_ms = 0; // per forward, including nested operators
  double share = 0;    // self_ms / sum of self_ms
};

struct OpProfile {
  int iterations = 0;
  double forward_ms = 0;  // mean wall time of one profiled forward (callbacks add overhead)
  std::vector<OpStat> by_op;
  std::vector<OpStat> by_module;
};

struct LoadRun {
  double offered_qps = 0;
  double achieved_qps = 0;
  int64_t requests = 0;
  double utilization = 0;        // busy time / wall time of the worker
  double waited_fraction = 0;    // requests that found the worker busy
  stats::Summary latency_ms;     // arrival to completion, queueing included
  stats::Summary queue_ms;       // arrival to start of service
  bool saturated = false;        // worker busy > 95% of the time, or the queue kept growing
};

struct ShapeChangeCheck {
  std::vector<int64_t> new_shape;
  std::vector<double> first_calls_ms;  // first calls at the new shape
  double expected_ms = 0;              // steady-state median scaled by the batch ratio
};

struct ModelProfile {
  std::string path;
  std::string sha256;
  model::ModelFacts facts;
  double load_ms = 0;
  double first_inference_ms = 0;
  stats::Summary latency_ms;
  double throughput = 0;  // samples per second at the measured batch
  std::vector<double> samples_ms, warmup_samples_ms;
  double page_faults_per_call = 0;  // minor faults per timed call (see measure::LatencySamples)
  uint64_t peak_rss_bytes = 0;  // the process's high-water mark over the run: in compare mode one figure for A and B
  uint64_t rss_before_load_bytes = 0;
  std::optional<measure::Accuracy> accuracy;
  std::optional<OpProfile> ops;
  std::vector<LoadRun> load;
  std::optional<ShapeChangeCheck> shape_change;
  bool frozen = false;  // the forward graph holds no attribute reads (torch.jit.freeze was applied)
};

struct Comparison {
  stats::Interval speedup;  // median(A) / median(B): > 1 means B is faster
  bool implausible = false; // beyond what any transform buys (speed_claim.hpp): shown as no gain
  measure::Agreement agreement;      // B's outputs against A's
  std::string agreement_data;  // what the agreement was measured on
};

// The prefill-cost table a decoder's run wrote (--prefill-cost-out) and the cost model cache-sim will fit to it.
struct PrefillCostOut {
  std::string path;
  size_t points = 0;
  cache::prefix::PrefillModel model;
  double max_relative_error = 0;
};

struct ProfileResult {
  std::vector<model::InputSpec> inputs;  // as fed (after --batch)
  bool inputs_guessed = false;           // inferred from the model's first layers (infer_inputs.hpp)
  int64_t batch = 1;
  int threads = 0;
  measure::TimingOptions timing;
  std::vector<ModelProfile> models;
  std::optional<Comparison> comparison;
  measure::MachineLoad load;  // around the timing (machine_load.hpp): oversubscribed, the latencies and speedup are untrusted
  std::vector<report::Finding> findings;
  std::vector<std::string> notes;  // e.g. the input shape inferred from the model's first layer
  Environment environment;
  std::optional<llm::GenerationStats> decoder;  // a decoder's run: generation instead of one forward call
  std::optional<PrefillCostOut> prefill_cost;
};

void to_json(nlohmann::json& j, const OpStat& o);
void to_json(nlohmann::json& j, const OpProfile& o);
void to_json(nlohmann::json& j, const LoadRun& r);
void to_json(nlohmann::json& j, const ModelProfile& m);
void to_json(nlohmann::json& j, const ProfileResult& r);
void summary_to_json(nlohmann::json& j, const stats::Summary& s);

}  // namespace lite::profile

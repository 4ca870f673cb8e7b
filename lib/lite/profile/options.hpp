#pragma once
// lite profile's options and result records. Torch-free: the CLI fills ProfileOptions from flags and
// prints ProfileResult through report printers without seeing a torch header.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/options.hpp"
#include "lite/core/report.hpp"
#include "lite/core/stats.hpp"
#include "lite/model/facts.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/profile/agreement.hpp"
#include "lite/profile/machine_load.hpp"

namespace lite::profile {

struct TimingOptions {
  int warmup = 20;          // untimed iterations first (the profiling executor specializes in the first 2)
  int iterations = 0;       // timed iterations; 0 = run for `duration_s`
  double duration_s = 2.0;  // used when iterations == 0
  int min_iterations = 20;  // with a duration, never fewer than this
  // Seconds one measurement (warm-up + timed calls) may take; 0: no limit. A model whose calls do not fit
  // gets fewer warm-up calls (never fewer than kMinWarmup) and fewer timed calls (never fewer than
  // kMinTimed), and the samples say so (LatencySamples::note). With `may_skip`, a measurement whose
  // minimum (kMinWarmup + kMinTimed calls) cannot fit stops after its first calls and is marked skipped.
  double budget_s = 0;
  bool may_skip = false;
  // The budget was the user's word: a measurement still running at 2 x budget_s + 30 s (a forward that never
  // returns, which no soft budget stops) ends the process with exit 2 (core/deadline.hpp).
  bool hard_budget = false;
  // Interleaved timing only (time_interleaved), duration mode: stop the timed calls once the 95% bootstrap
  // interval of the median latency ratio A/B lies wholly above or below 1 and is narrower than this fraction
  // of the ratio (the comparison is decided; more calls would only narrow it), and end the warm-up once a
  // call is within 10% of the cheapest before it (at least kMinWarmup + 1 calls). 0: never.
  double settle_width = 0;
  // Interleaved timing only, duration mode: the caller's own rule for when the measurement has decided what it is
  // for, asked with the timed samples of A and B after each timed call from kMinSettleCalls on (the rule keeps
  // its own pace: a bootstrap every call is dear). Empty: never; asked beside settle_width's rule.
  std::function<bool(const std::vector<double>& a_ms, const std::vector<double>& b_ms)> settled_by;
};
// With settle_width, never fewer timed calls than this (the interval of fewer is too coarse to trust).
inline constexpr int kMinSettleCalls = 8;
// The profiling executor specializes a graph in its first two calls: never fewer warm-up calls than this
// under a budget (unless warmup itself asks for fewer).
inline constexpr int kMinWarmup = 2;
// Never fewer timed calls than this under a budget (a median and an interval need a few samples).
inline constexpr int kMinTimed = 3;
// Seconds one latency measurement of a transform (quantize's candidate against frozen float, prune's pruned model
// against the original, at one batch size) may take when the user gave no budget: batch sizes whose minimum
// measurement does not fit are skipped, slow ones get fewer calls.
inline constexpr double kMeasurementBudget = 10.0;
// lite profile's per-measurement budget when {budget_s} is not given.
inline constexpr double kDefaultProfileBudget = 60.0;
// The timing loop's value rules, keyed "warmup", "iterations", "duration_s" (profile and quantize share them).
void validate(const TimingOptions& o);

// lite profile's options (see lite/core/options.hpp for the pattern). Keys are the field names.
struct ProfileOptions {
  std::vector<std::string> models;        // one model, or two for an A/B comparison (A = baseline)
  std::vector<model::InputSpec> inputs;   // JSON: ["1x3x224x224", "8x128:int64"]
  std::vector<std::string> input_files;   // a tensor file per input
  std::optional<int64_t> batch;           // replaces the leading dimension of every input; unset keeps the shapes
  int warmup = 20;                        // untimed iterations (the profiling executor specializes in the first 2)
  std::optional<int> iterations;          // timed iterations; unset: run for duration_s
  double duration_s = 2.0;                // seconds of timed iterations when iterations is unset (at least 20)
  int threads = 0;                        // intra-op threads; 0 = libtorch's default
  std::string qengine = "onednn";         // quantized engine for quantized models
  bool ops = false;                       // per-operator breakdown
  int top = 15;                           // rows in the per-op tables
  int op_iterations = 20;                 // iterations profiled with operator callbacks
  std::string trace;                      // Chrome trace (chrome://tracing, Perfetto) of the profiled iterations
  std::string eval, labels;               // accuracy with labels
  int64_t eval_batch = 64;
  std::vector<double> qps;                // load mode: offered rates (requests/s), one run each
  int64_t requests = 0;                   // requests per load run
  uint64_t seed = 1;                      // inputs and arrivals are seeded
  std::optional<double> budget_s;         // seconds the timed measurement may take; unset: kDefaultProfileBudget
                                          // (no limit when iterations is given)
};
void to_json(nlohmann::json& j, const ProfileOptions& o);
void from_json(const nlohmann::json& j, ProfileOptions& o);
// Value rules, before any work: OptionError naming the key. Also checks that the trace's folder exists.
void validate(const ProfileOptions& o);
TimingOptions timing_of(const ProfileOptions& o);

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
  double page_faults_per_call = 0;  // minor faults per timed call (see LatencySamples)
  uint64_t peak_rss_bytes = 0;  // the process's high-water mark over the run: in compare mode one figure for A and B
  uint64_t rss_before_load_bytes = 0;
  std::optional<Accuracy> accuracy;
  std::optional<OpProfile> ops;
  std::vector<LoadRun> load;
  std::optional<ShapeChangeCheck> shape_change;
  bool frozen = false;  // the forward graph holds no attribute reads (torch.jit.freeze was applied)
};

struct Comparison {
  stats::Interval speedup;  // median(A) / median(B): > 1 means B is faster
  bool implausible = false; // beyond what any transform buys (speed_claim.hpp): shown as no gain
  Agreement agreement;      // B's outputs against A's
  std::string agreement_data;  // what the agreement was measured on
};

struct ProfileResult {
  std::vector<model::InputSpec> inputs;  // as fed (after --batch)
  bool inputs_guessed = false;           // inferred from the model's first layers (infer_inputs.hpp)
  int64_t batch = 1;
  int threads = 0;
  TimingOptions timing;
  std::vector<ModelProfile> models;
  std::optional<Comparison> comparison;
  MachineLoad load;  // around the timing (machine_load.hpp): oversubscribed, the latencies and speedup are untrusted
  std::vector<report::Finding> findings;
  std::vector<std::string> notes;  // e.g. the input shape inferred from the model's first layer
  Environment environment;
};

void to_json(nlohmann::json& j, const TimingOptions& o);
void to_json(nlohmann::json& j, const OpStat& o);
void to_json(nlohmann::json& j, const OpProfile& o);
void to_json(nlohmann::json& j, const LoadRun& r);
void to_json(nlohmann::json& j, const ModelProfile& m);
void to_json(nlohmann::json& j, const ProfileResult& r);
void summary_to_json(nlohmann::json& j, const stats::Summary& s);

}  // namespace lite::profile

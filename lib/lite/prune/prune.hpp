#pragma once
// lite prune: the library verb. Torch-free: the CLI fills PruneOptions, calls validate() and run(), and
// prints to_report(result). run() never prints and never exits; it throws UsageError / InputError /
// OptionError for bad options and inputs (nothing written) and returns a result whose gates say whether
// a check failed (the artifact is still written).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/gates.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"
#include "lite/core/run_context.hpp"
#include "lite/measure/agreement.hpp"
#include "lite/measure/machine_load.hpp"
#include "lite/prune/decoder_result.hpp"
#include "lite/prune/options.hpp"

namespace lite::prune {

// One channel dependency group: channels that must be removed together from every tensor listed.
struct GroupPlan {
  std::string name;                 // the first layer producing these channels
  std::vector<std::string> layers;  // modules whose output channels these are (conv, batchnorm, linear)
  int64_t channels = 0;             // before
  int64_t kept = 0;                 // after (== channels when skipped)
  double ratio = 0;                 // requested fraction removed
  int64_t tensors = 0;              // tensor slices that change together
  int64_t multiple_of = 1;          // kept stays a multiple of this (attention: num_heads; grouped conv: groups)
  int64_t blocks = 1;               // > 1 through a grouped conv: every block loses the same local channels
  bool prunable = true;
  std::string skipped;              // why it was left alone: the op or rule that stopped it
};

// Unstructured: one conv/linear weight.
struct LayerSparsity {
  std::string name;
  int64_t elements = 0, zeros = 0;
  double sparsity = 0;  // zeros / elements after pruning
  bool excluded = false;
};

struct Latency {
  int64_t batch = 0;
  double original_ms = 0;  // the original model, frozen (measure::frozen_float: freeze + optimize_for_inference)
  double pruned_ms = 0;    // the pruned model, frozen the same way
  double ratio = 1, ratio_low = 1, ratio_high = 1;  // pruned / original, 95% bootstrap interval
  bool implausible = false;  // a speedup the MACs removed cannot explain (profile/speed_claim.hpp): no gain shown
};

struct Quality {
  std::string metric;  // "top-1 accuracy" (labels) or "top-1 agreement" (with the original)
  std::string data;
  int64_t samples = 0;
  double before = 0, after = 0, drop = 0;  // percent, points
  measure::Agreement agreement;
};

// Sensitivity analysis: one group pruned alone at one ratio.
struct SensitivityPoint {
  std::string group;
  int64_t channels = 0, kept = 0;
  double ratio = 0;
  double value = 0;  // percent (accuracy or agreement)
  double drop = 0;   // points
};

struct Figures {
  uint64_t parameters = 0, macs = 0, file_bytes = 0, zstd_bytes = 0;
};

struct PruneResult {
  std::string model, output;
  std::string method;     // "structured" or "unstructured"
  std::string criterion;  // structured only
  bool dry_run = false;
  bool global = false;
  int threads = 0;
  std::vector<GroupPlan> groups;
  std::vector<LayerSparsity> layers;
  uint64_t planned_parameters = 0;  // parameters the plan leaves (dry run included)
  Figures before, after;
  std::vector<Latency> latency;
  measure::MachineLoad load;        // around the latency measurement (profile/machine_load.hpp)
  bool measured = false;            // quality and latency present (not a dry run)
  Quality quality;
  double tolerance = 0;
  bool tolerance_given = false;
  double agreement_floor = 0;            // points; applied when no tolerance is given
  std::string guessed_inputs;            // "1x1x28x28" when lite inferred the input shape, else ""
  std::vector<SensitivityPoint> sensitivity;
  std::string sensitivity_csv, sensitivity_svg;  // files written by the analysis
  std::vector<LayerRatio> suggested;             // with a tolerance: the largest ratio per group that fits
  std::optional<DecoderPruneResult> decoder = {};  // a decoder's run: its cuts and figures before and after
  Gates gates;
  std::vector<report::Finding> findings;
  std::vector<std::string> notes;
  double wall_s = 0;
};

void to_json(nlohmann::json& j, const GroupPlan& g);
void to_json(nlohmann::json& j, const LayerSparsity& l);
void to_json(nlohmann::json& j, const Latency& l);
void to_json(nlohmann::json& j, const Quality& q);
void to_json(nlohmann::json& j, const Figures& f);
void to_json(nlohmann::json& j, const SensitivityPoint& p);
void to_json(nlohmann::json& j, const PruneResult& r);

// `context`: how it was invoked, recorded in the artifact (lite/core/run_context.hpp).
PruneResult run(const PruneOptions& options, Progress& progress, const RunContext& context = {});

report::Report to_report(const PruneResult& result);

// The importance criteria (one file each, one table): name and a one-line description, for --help.
struct CriterionInfo {
  const char* name;
  const char* description;
};
std::vector<CriterionInfo> criterion_infos();

}  // namespace lite::prune

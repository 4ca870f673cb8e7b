#pragma once
// Planning steps of lite prune (plan.cpp), separate from run() so the unit tests drive them directly.
#include <functional>
#include <vector>

#include "lite/model/dataset.hpp"
#include "lite/model/module_bytes.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

// One GroupPlan per dependency group: ratio from the options, why a group is left alone (the op that
// blocked it, a single channel, an --exclude glob). Adds a warning for globs that match no layer.
std::vector<GroupPlan> describe_groups(const DependencyGraph& graph, const PruneOptions& o,
                                       std::vector<report::Finding>& findings);

// Channels to remove per group given the criterion's scores (one tensor per group; undefined for groups
// left alone); fills each plan's kept count (and ratio, for --global).
Removal choose_channels(const std::vector<torch::Tensor>& scores, std::vector<GroupPlan>& plans, const PruneOptions& o);

// Parameter elements the module will have after `removal`.
uint64_t planned_parameter_count(const torch::jit::Module& module, const DependencyGraph& graph, const Removal& removal);

}  // namespace lite::prune

namespace lite::prune {

// Saves to memory and loads a fresh copy (eval mode): a copy whose method graphs may still be edited.
using model::deserialize;
using model::serialize;

// Each prunable group pruned alone at each of o.sensitivity_ratios; `measure` returns the metric (percent)
// of a pruned copy, `baseline` the original's.
std::vector<SensitivityPoint> analyse_sensitivity(const torch::jit::Module& module, const DependencyGraph& graph,
                                                  const std::vector<GroupPlan>& plans,
                                                  const std::vector<torch::Tensor>& scores, const PruneOptions& o,
                                                  const std::function<double(torch::jit::Module&)>& measure,
                                                  double baseline, Progress& progress);
// Per group, the largest ratio tried whose drop is within `tolerance` (0 when none is).
std::vector<LayerRatio> suggest_ratios(const std::vector<SensitivityPoint>& points, double tolerance);
std::string sensitivity_csv(const std::vector<SensitivityPoint>& points, const std::string& metric);
std::string sensitivity_svg(const std::vector<SensitivityPoint>& points, const std::string& metric, double baseline);

}  // namespace lite::prune

namespace lite::prune {

// structured.cpp: the structured steps shared by lite prune and lite distill's --student-from-prune.
struct ScoredGroups {
  DependencyGraph graph;
  std::vector<GroupPlan> plans;       // one per dependency group (prunable or why not)
  std::vector<torch::Tensor> scores;  // per group; undefined for groups left alone
};
// Groups of `module` (its branches decided on `example`, see build_dependency_graph) described per `o` and
// scored by `criterion` (gradients_for_taylor is called only when the
// criterion needs data, after the model proved prunable). Throws
// InputError(source_name, "has nothing prunable: <each group: why>", fix_if_nothing_prunable).
using GradientSource = std::function<std::map<std::string, torch::Tensor>()>;
ScoredGroups score_groups(const torch::jit::Module& module, const std::vector<c10::IValue>& example,
                          const std::string& source_name, const PruneOptions& o,
                          const Criterion& criterion, const GradientSource& gradients_for_taylor,
                          std::vector<report::Finding>& findings, const std::string& fix_if_nothing_prunable);
// Parameter gradients on `data` (on a copy of the module) for the taylor criterion; InputError naming the data
// file with `fix` when the model rejects it.
std::map<std::string, torch::Tensor> taylor_gradients(const torch::jit::Module& module, const model::Dataset& data,
                                                      int64_t batch, const std::string& fix);
// A pruned copy of `module`, serialized (the module itself is untouched).
std::string cut_copy(const torch::jit::Module& module, const DependencyGraph& graph, const Removal& removal);

}  // namespace lite::prune

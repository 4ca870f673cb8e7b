#pragma once
// Planning steps of lite prune (plan.cpp), separate from run() so the unit tests drive them directly.
#include <vector>

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

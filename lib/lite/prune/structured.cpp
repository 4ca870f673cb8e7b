// The structured-pruning steps as in-memory calls, shared by lite prune (prune.cpp) and lite distill's
// --student-from-prune (distill/pruned_student.cpp), so both describe, score and cut groups the same way.
#include <algorithm>
#include <functional>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/prune/plan_internal.hpp"

namespace lite::prune {

ScoredGroups score_groups(const torch::jit::Module& module, const std::vector<c10::IValue>& example,
                          const std::string& source_name, const PruneOptions& o,
                          const Criterion& criterion, const GradientSource& gradients_for_taylor,
                          std::vector<report::Finding>& findings, const std::string& fix_if_nothing_prunable) {
  ScoredGroups s{build_dependency_graph(module, example), {}, {}};
  s.plans = describe_groups(s.graph, o, findings);
  if (std::none_of(s.plans.begin(), s.plans.end(), [](const GroupPlan& g) { return g.prunable; })) {
    std::vector<std::string> why;
    for (const auto& g : s.plans) why.push_back(g.name + ": " + g.skipped);
    throw InputError(source_name,
                     "has nothing prunable: " + (why.empty() ? std::string("no convolution or linear layer") : join(why, "; ")),
                     fix_if_nothing_prunable);
  }
  std::map<std::string, torch::Tensor> gradients;
  if (criterion.needs_data) gradients = gradients_for_taylor();  // only once the model is known to be prunable
  s.scores.resize(s.plans.size());
  for (size_t i = 0; i < s.plans.size(); ++i)
    if (s.plans[i].prunable)
      s.scores[i] = criterion.score(CriterionContext{module, s.graph.groups[i], gradients.empty() ? nullptr : &gradients});
  return s;
}

std::map<std::string, torch::Tensor> taylor_gradients(const torch::jit::Module& module, const model::Dataset& data,
                                                      int64_t batch, const std::string& fix) {
  // On a copy: backward passes must not touch the module that is pruned (or its autograd state).
  torch::jit::Module copy = deserialize(serialize(module));
  try {
    return parameter_gradients(copy, data.inputs(), data.y ? c10::optional<torch::Tensor>(*data.y) : c10::nullopt, batch);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(data.source.string(), "gradients for the taylor criterion failed: " + model::torch_error_reason(e), fix);
  }
}

std::string cut_copy(const torch::jit::Module& module, const DependencyGraph& graph, const Removal& removal) {
  // Surgery edits method graphs, so it runs on a fresh copy that has never run forward.
  torch::jit::Module pruned = deserialize(serialize(module));
  remove_channels(pruned, graph, removal);
  return serialize(pruned);
}

}  // namespace lite::prune

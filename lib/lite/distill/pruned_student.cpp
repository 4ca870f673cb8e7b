// student_from_prune: runs lite prune's planning and surgery on a copy of the teacher, the steps
// lite::prune::run takes for a structured --ratio, minus what only a standalone prune needs (latency
// timing, quality figures, the artifact): distill measures the pruned model itself (parameters, MACs,
// validation metric before recovery) and writes only the recovered student.
#include "lite/distill/pruned_student.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lite/core/error.hpp"
#include "lite/core/sha256.hpp"
#include "lite/core/text.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/prune/plan_internal.hpp"

namespace lite::distill {

namespace {

prune::PruneOptions prune_options(const DistillOptions& o) {
  prune::PruneOptions po;
  po.model = o.teacher;
  po.ratio = *o.student_from_prune;
  po.criterion = o.prune_criterion;
  po.eval_batch = o.eval_batch;
  return po;
}

std::map<std::string, torch::Tensor> taylor_gradients(const model::LoadedModel& teacher, const model::Dataset& data,
                                                      int64_t batch) {
  auto head = model::take_first(data, 256);
  torch::jit::Module copy = prune::deserialize(prune::serialize(teacher.module));
  try {
    return prune::parameter_gradients(copy, head.x, head.y ? c10::optional<torch::Tensor>(*head.y) : c10::nullopt,
                                      batch);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(data.source.string(), "gradients for the taylor criterion failed: " + model::torch_error_reason(e),
                     "pass {data} shaped like the teacher's input, or use {prune_criterion} l1");
  }
}

}  // namespace

model::LoadedModel prune_teacher(const model::LoadedModel& teacher, const DistillOptions& o,
                                 const model::Dataset& samples, PruneStage& stage) {
  const prune::PruneOptions po = prune_options(o);
  const prune::Criterion& criterion = prune::find_criterion(o.prune_criterion);
  const prune::DependencyGraph graph = prune::build_dependency_graph(teacher.module);
  std::vector<report::Finding> findings;
  std::vector<prune::GroupPlan> plans = prune::describe_groups(graph, po, findings);
  if (std::none_of(plans.begin(), plans.end(), [](const prune::GroupPlan& g) { return g.prunable; })) {
    std::vector<std::string> why;
    for (const auto& g : plans) why.push_back(g.name + ": " + g.skipped);
    throw InputError(teacher.path.string(),
                     "has nothing prunable: " + (why.empty() ? std::string("no convolution or linear layer") : join(why, "; ")),
                     "pass a {student} model of your own instead of {student_from_prune}");
  }
  std::map<std::string, torch::Tensor> gradients;
  if (criterion.needs_data) gradients = taylor_gradients(teacher, samples, o.eval_batch);
  std::vector<torch::Tensor> scores(plans.size());
  for (size_t i = 0; i < plans.size(); ++i)
    if (plans[i].prunable)
      scores[i] = criterion.score(
          prune::CriterionContext{teacher.module, graph.groups[i], gradients.empty() ? nullptr : &gradients});
  const prune::Removal removal = prune::choose_channels(scores, plans, po);

  // Surgery edits method graphs, so it runs on a fresh copy that has never run forward; the result is
  // saved and loaded once more so that the student starts from a clean module.
  torch::jit::Module pruned = prune::deserialize(prune::serialize(teacher.module));
  prune::remove_channels(pruned, graph, removal);
  const std::string bytes = prune::serialize(pruned);

  stage.ratio = *o.student_from_prune;
  stage.criterion = criterion.name;
  stage.groups = int64_t(plans.size());
  for (const auto& g : plans) {
    if (!g.prunable || g.kept == g.channels) continue;
    stage.groups_pruned += 1;
    stage.channels_before += g.channels;
    stage.channels_after += g.kept;
  }
  model::LoadedModel student;
  student.module = prune::deserialize(bytes);
  student.path = teacher.path;  // the artifact derives from the teacher; its provenance chain continues
  student.file_bytes = bytes.size();
  student.sha256 = sha256_hex(bytes);
  student.provenance = teacher.provenance;
  student.declared_inputs = teacher.declared_inputs;
  return student;
}

}  // namespace lite::distill

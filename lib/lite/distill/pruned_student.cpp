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

// The teacher's branches that depend on the input are decided on one training sample.
std::vector<c10::IValue> one_sample(const model::Dataset& samples) {
  if (!samples.x.defined() || samples.x.size(0) == 0) return {};
  return {samples.x.narrow(0, 0, 1)};
}

}  // namespace

model::LoadedModel prune_teacher(const model::LoadedModel& teacher, const DistillOptions& o,
                                 const model::Dataset& samples, PruneStage& stage) {
  const prune::PruneOptions po = prune_options(o);
  const prune::Criterion& criterion = prune::find_criterion(o.prune_criterion);
  const auto gradients = [&] {
    return prune::taylor_gradients(teacher.module, model::take_first(samples, 256), o.eval_batch,
                                   "pass {data} shaped like the teacher's input, or use {prune_criterion} l1");
  };
  std::vector<report::Finding> findings;
  prune::ScoredGroups scored =
      prune::score_groups(teacher.module, one_sample(samples), teacher.path.string(), po, criterion, gradients, findings,
                          "pass a {student} model of your own instead of {student_from_prune}");
  std::vector<prune::GroupPlan>& plans = scored.plans;
  const prune::Removal removal = prune::choose_channels(scored.scores, plans, po);
  // The student starts from a clean module: the pruned copy saved and loaded once more.
  const std::string bytes = prune::cut_copy(teacher.module, scored.graph, removal);

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

#pragma once
// The student of "prune, then recover" (student_from_prune): the teacher structurally pruned by lite prune's
// own pipeline (dependency graph, criterion, channel choice, surgery), in memory: no file is written and
// no second process runs. Torch side, for distill.cpp and the unit tests.
#include <torch/script.h>

#include "lite/distill/distill.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/load.hpp"

namespace lite::distill {

// The teacher pruned at o.student_from_prune by o.prune_criterion, as a freshly loaded module (path,
// sha256 and provenance of the teacher, which it derives from). `samples` feeds the taylor criterion's
// gradients (its first 256). Fills the stage's ratio, criterion, group and channel counts. Throws
// InputError naming the teacher when it has nothing prunable.
model::LoadedModel prune_teacher(const model::LoadedModel& teacher, const DistillOptions& o,
                                 const model::Dataset& samples, PruneStage& stage);

}  // namespace lite::distill

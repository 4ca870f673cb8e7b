// l2: a channel's importance is the Euclidean norm of all its weights across the group (one norm over
// the concatenated slices), which favours channels with a few large weights more than l1 does.
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

torch::Tensor score_l2(const CriterionContext& c) {
  torch::NoGradGuard no_grad;
  auto squares = torch::zeros({c.group.channels}, torch::kDouble);
  for (const auto& sl : c.group.slices) {
    if (sl.attr == "running_mean" || sl.attr == "running_var") continue;
    auto rows = slice_rows(tensor_at(c.module, sl.module, sl.attr), sl, c.group.channels).to(torch::kDouble);
    squares += rows.pow(2).sum(1);
  }
  return squares.sqrt();
}

}  // namespace lite::prune

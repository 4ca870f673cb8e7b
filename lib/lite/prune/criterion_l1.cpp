// l1: a channel's importance is the sum of |w| over every tensor slice of its group (weights, biases,
// batchnorm parameters; running statistics are not weights and are skipped). The classic magnitude
// criterion of Li et al. 2017, extended to whole dependency groups as in Torch-Pruning.
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

torch::Tensor score_l1(const CriterionContext& c) {
  torch::NoGradGuard no_grad;
  auto score = torch::zeros({c.group.channels}, torch::kDouble);
  for (const auto& sl : c.group.slices) {
    if (sl.attr == "running_mean" || sl.attr == "running_var") continue;
    auto rows = slice_rows(tensor_at(c.module, sl.module, sl.attr), sl, c.group.channels);
    score += rows.abs().sum(1).to(torch::kDouble);
  }
  return score;
}

}  // namespace lite::prune

// bn-scale: network slimming (Liu et al. 2017): a channel's importance is |gamma| of the batchnorm
// layers on it, summed over the group. A batchnorm scales its channel's whole output, so a small gamma
// means the channel barely reaches the next layer. Groups without a batchnorm fall back to l1.
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

torch::Tensor score_bn_scale(const CriterionContext& c) {
  torch::NoGradGuard no_grad;
  auto score = torch::zeros({c.group.channels}, torch::kDouble);
  bool any = false;
  for (const auto& sl : c.group.slices) {
    if (sl.role != "norm_scale") continue;
    score += slice_rows(tensor_at(c.module, sl.module, sl.attr), sl, c.group.channels).abs().sum(1).to(torch::kDouble);
    any = true;
  }
  return any ? score : score_l1(c);
}

}  // namespace lite::prune

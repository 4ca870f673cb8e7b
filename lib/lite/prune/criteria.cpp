// The importance criteria, one file each (criterion_*.cpp), listed in this one table that drives
// --criterion parsing, --help and the tests that loop over every entry. A criterion scores each channel of
// a group over all of the group's tensors at once (Torch-Pruning's group importance), so a residual stage
// is ranked by every conv and batchnorm it spans, not by one layer.
#include "lite/core/registry.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

torch::Tensor score_l2(const CriterionContext& c);
torch::Tensor score_bn_scale(const CriterionContext& c);
torch::Tensor score_taylor(const CriterionContext& c);

const std::vector<Criterion>& criteria() {
  static const std::vector<Criterion> table = {
      {"l1", "sum of |w| over every weight of the channel's group", false, score_l1},
      {"l2", "Euclidean norm of every weight of the channel's group", false, score_l2},
      {"bn-scale", "|gamma| of the group's batchnorms; l1 where a group has none", false, score_bn_scale},
      {"taylor", "first-order Taylor |w * dL/dw|, gradients from {data}", true, score_taylor},
  };
  return table;
}

const Criterion& find_criterion(const std::string& name) {
  return find_named(criteria(), name, "criterion", "criterion",
                    [](const Criterion& c) { return std::vector<std::string>{c.name}; });
}

std::vector<CriterionInfo> criterion_infos() {
  std::vector<CriterionInfo> out;
  for (const auto& c : criteria()) out.push_back({c.name, c.description});
  return out;
}

torch::Tensor slice_rows(const torch::Tensor& tensor, const TensorSlice& slice, int64_t channels) {
  if (slice.fold) {  // a grouped convolution's columns: channel j * fold + l is column l of block j's rows
    const int64_t blocks = channels / slice.fold;
    return tensor.reshape({blocks, tensor.size(0) / blocks, slice.fold, -1}).permute({0, 2, 1, 3}).reshape({channels, -1});
  }
  return tensor.narrow(slice.dim, slice.offset * slice.factor, channels * slice.factor)
      .movedim(slice.dim, 0)
      .reshape({channels, -1});
}

}  // namespace lite::prune

// Unstructured magnitude pruning: the smallest |w| of each conv/linear weight set to zero, exactly
// round(sparsity * elements) per layer, or (global) everything below one threshold chosen across all
// layers so the same fraction of all weights goes. Shapes do not change, so dense kernels run no faster;
// the gain is in compressed size, which the report shows beside the raw size.
#include <algorithm>
#include <cmath>

#include "lite/core/text.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

namespace {

bool excluded(const std::string& name, const std::vector<std::string>& exclude) {
  return std::any_of(exclude.begin(), exclude.end(), [&](const std::string& g) { return glob_match(g, name); });
}

void set_weight(torch::jit::Module& module, const WeightRef& ref, const torch::Tensor& value) {
  torch::jit::Module owner = submodule_at(module, ref.module);
  bool requires_grad = owner.attr(ref.attr).toTensor().requires_grad();
  owner._ivalue()->setAttr(ref.attr, value.contiguous().detach().requires_grad_(requires_grad));
}

}  // namespace

std::vector<LayerSparsity> zero_smallest(torch::jit::Module& module, const std::vector<WeightRef>& weights,
                                         double sparsity, bool global, const std::vector<std::string>& exclude) {
  torch::NoGradGuard no_grad;
  std::vector<LayerSparsity> out;
  double threshold = -1;
  if (global) {
    std::vector<torch::Tensor> all;
    for (const auto& w : weights)
      if (!excluded(w.module, exclude)) all.push_back(tensor_at(module, w.module, w.attr).abs().flatten());
    if (!all.empty()) {
      auto flat = torch::cat(all).to(torch::kDouble);
      int64_t k = int64_t(std::llround(sparsity * double(flat.numel())));
      if (k > 0) threshold = std::get<0>(flat.kthvalue(k)).item<double>();
    }
  }
  for (const auto& w : weights) {
    LayerSparsity l;
    l.name = w.module;
    torch::Tensor t = tensor_at(module, w.module, w.attr);
    l.elements = t.numel();
    l.excluded = excluded(w.module, exclude);
    if (!l.excluded) {
      torch::Tensor keep;
      if (global) {
        keep = t.abs().to(torch::kDouble) > threshold;
      } else {
        int64_t k = int64_t(std::llround(sparsity * double(l.elements)));
        keep = torch::ones_like(t, torch::kBool);
        if (k > 0) {
          auto order = t.abs().flatten().argsort();  // ascending: the k smallest go, ties by position
          keep.view(-1).index_fill_(0, order.narrow(0, 0, k), false);
        }
      }
      set_weight(module, w, t * keep.to(t.dtype()));
    }
    torch::Tensor now = tensor_at(module, w.module, w.attr);
    l.zeros = (now == 0).sum().item<int64_t>();
    l.sparsity = l.elements ? double(l.zeros) / double(l.elements) : 0;
    out.push_back(l);
  }
  return out;
}

}  // namespace lite::prune

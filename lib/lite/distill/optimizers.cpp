// The optimizer table (see optimizers.hpp): libtorch's own implementations, one entry each.
//   adam:  Adam (Kingma & Ba) with L2 weight decay added to the gradient, as torch.optim.Adam does;
//   adamw: Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW;
//   sgd:   SGD with (heavy-ball) momentum, as torch.optim.SGD.
#include "lite/distill/optimizers.hpp"

#include <torch/torch.h>

#include "lite/core/registry.hpp"

namespace lite::distill {

namespace {

std::unique_ptr<torch::optim::Optimizer> make_adam(const std::vector<at::Tensor>& p, const DistillOptions& o) {
  return std::make_unique<torch::optim::Adam>(p, torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
}

std::unique_ptr<torch::optim::Optimizer> make_adamw(const std::vector<at::Tensor>& p, const DistillOptions& o) {
  return std::make_unique<torch::optim::AdamW>(p, torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
}

std::unique_ptr<torch::optim::Optimizer> make_sgd(const std::vector<at::Tensor>& p, const DistillOptions& o) {
  return std::make_unique<torch::optim::SGD>(
      p, torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
}

}  // namespace

const std::vector<OptimizerEntry>& optimizers() {
  static const std::vector<OptimizerEntry> table = {
      {{"adam"}, "Adam, weight decay as L2 in the gradient (torch.optim.Adam)", make_adam},
      {{"adamw"}, "Adam with decoupled weight decay (torch.optim.AdamW)", make_adamw},
      {{"sgd"}, "SGD with momentum (torch.optim.SGD)", make_sgd},
  };
  return table;
}

const OptimizerEntry& find_optimizer(const std::string& name) {
  return find_named(optimizers(), name, "optimizer", "optimizer", [](const OptimizerEntry& e) { return e.names; });
}

}  // namespace lite::distill

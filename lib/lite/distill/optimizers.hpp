#pragma once
// The optimizer table: one entry per optimizer `optimizer` may name. The same table drives option
// validation ("did you mean"), the CLI's help text and the trainer, so a new optimizer is one entry in
// optimizers.cpp. Torch-free: the builder's types are only declared here.
#include <memory>
#include <string>
#include <vector>

#include "lite/distill/options.hpp"

namespace at {
class Tensor;
}
namespace torch::optim {
class Optimizer;
}

namespace lite::distill {

struct OptimizerEntry {
  std::vector<std::string> names;  // canonical first, then aliases
  std::string summary;
  // Builds the optimizer over `parameters` with lr, weight_decay (and momentum) from the options.
  std::unique_ptr<torch::optim::Optimizer> (*make)(const std::vector<at::Tensor>& parameters,
                                                   const DistillOptions& options);
};

const std::vector<OptimizerEntry>& optimizers();

// Throws OptionError("optimizer", "unknown optimizer ...; did you mean ...") for an unknown name.
const OptimizerEntry& find_optimizer(const std::string& name);

}  // namespace lite::distill

#pragma once
// Computes ModelFacts for a loaded model: parameter and tensor counts from its attributes (or, for a
// frozen model, from its graph constants), and MACs per layer from one instrumented forward pass.
#include <torch/script.h>

#include <vector>

#include "lite/model/facts.hpp"
#include "lite/model/load.hpp"

namespace lite::model {

ModelFacts measure_facts(LoadedModel& model, const std::vector<torch::Tensor>& inputs);

// Parameter/tensor counts only (no forward pass).
void count_model_tensors(const torch::jit::Module& module, ModelFacts& facts);

}  // namespace lite::model

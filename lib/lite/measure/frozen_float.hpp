#pragma once
// The frozen float baseline: what quantize, prune and recipe's min_speedup gate time a model against.
#include <torch/script.h>

#include <string>
#include <vector>

namespace lite::measure {

// The baseline of the speed guard: torch::jit::freeze + torch::jit::optimize_for_inference, checked on
// `sample` (the timing input): optimize_for_inference miscomputes some graphs in PyTorch 1.13 (a convolution
// whose output channels are not a multiple of 16 followed by hardswish: mobilenet_v3_small's outputs had a
// cosine of 0.21 with float's). When its outputs differ from the model's by more than the tolerance, the
// baseline is the model frozen only (or, should freezing differ too, the model as given) and `note` says
// so. An empty sample skips the check. Throws what torch::jit::freeze throws (a model that does not freeze).
inline constexpr double kOptimizeForInferenceTolerance = 1e-3;  // of the largest output magnitude
struct FrozenFloat {
  torch::jit::Module module;
  double optimized_error = 0;  // output_discrepancy of the optimized graph
  std::string note;            // set when the baseline is not the optimized graph
};
FrozenFloat frozen_float(const torch::jit::Module& module, const std::vector<torch::Tensor>& sample);

// How far `other` is from `reference`: the largest absolute difference over the largest magnitude of the
// reference (per tensor; the worst over the tensors of tuples, lists and dicts of the same structure);
// infinity when shapes or structures differ. NaN in both at the same place counts as agreement.
double output_discrepancy(const c10::IValue& reference, const c10::IValue& other);

}  // namespace lite::measure

// The frozen float baseline lite times transforms against, checked against the model on the timing input.
#include <torch/jit.h>

#include <limits>
#include <optional>

#include <fmt/format.h>

#include "lite/measure/frozen_float.hpp"

namespace lite::measure {

double output_discrepancy(const c10::IValue& reference, const c10::IValue& other) {
  constexpr double kDiffers = std::numeric_limits<double>::infinity();
  if (reference.isTensor() && other.isTensor()) {
    torch::Tensor a = reference.toTensor(), b = other.toTensor();
    if (a.is_quantized()) a = a.dequantize();
    if (b.is_quantized()) b = b.dequantize();
    if (a.sizes() != b.sizes()) return kDiffers;
    if (a.numel() == 0) return 0;
    a = a.to(torch::kDouble);
    b = b.to(torch::kDouble);
    torch::Tensor diff = (a - b).abs();
    diff = torch::where(a.isnan() & b.isnan(), torch::zeros_like(diff), diff);  // NaN where both are NaN: same
    if (diff.isnan().any().item<bool>()) return kDiffers;
    const double scale = a.abs().nan_to_num(0, 0, 0).max().item<double>();
    return diff.max().item<double>() / (scale > 0 ? scale : 1.0);
  }
  auto elements = [](const c10::IValue& v) -> std::optional<std::vector<c10::IValue>> {
    if (v.isTuple()) return v.toTupleRef().elements().vec();
    if (v.isList()) return v.toList().vec();
    if (v.isGenericDict()) {
      std::vector<c10::IValue> values;
      for (const auto& entry : v.toGenericDict()) values.push_back(entry.value());
      return values;
    }
    return std::nullopt;
  };
  auto x = elements(reference), y = elements(other);
  if (x && y) {
    if (x->size() != y->size()) return kDiffers;
    double worst = 0;
    for (size_t i = 0; i < x->size(); ++i) worst = std::max(worst, output_discrepancy((*x)[i], (*y)[i]));
    return worst;
  }
  if (x || y || reference.tagKind() != other.tagKind()) return kDiffers;
  return 0;  // None, scalars, strings: not what the baseline's speed depends on
}

namespace {
c10::IValue forward_once(torch::jit::Module& m, const std::vector<torch::Tensor>& inputs) {
  return m.forward(std::vector<c10::IValue>(inputs.begin(), inputs.end()));
}
}  // namespace

FrozenFloat frozen_float(const torch::jit::Module& module, const std::vector<torch::Tensor>& sample) {
  torch::NoGradGuard no_grad;
  torch::jit::Module m = module.clone();
  m.eval();
  FrozenFloat out;
  out.module = torch::jit::freeze(m);
  torch::jit::Module to_optimize = out.module.clone();
  torch::jit::Module optimized = torch::jit::optimize_for_inference(to_optimize);
  if (sample.empty()) {
    out.module = optimized;
    return out;
  }
  torch::jit::Module original = module.clone();
  original.eval();
  const c10::IValue reference = forward_once(original, sample);
  try {
    out.optimized_error = output_discrepancy(reference, forward_once(optimized, sample));
  } catch (const c10::Error&) {  // a miscompiled graph may throw as well: the same fallback
    out.optimized_error = std::numeric_limits<double>::infinity();
  }
  if (out.optimized_error <= kOptimizeForInferenceTolerance) {
    out.module = optimized;
    return out;
  }
  const double frozen_error = output_discrepancy(reference, forward_once(out.module, sample));
  out.note = fmt::format(
      "the frozen float baseline is torch::jit::freeze alone: torch::jit::optimize_for_inference changed this "
      "model's outputs (largest difference {:.3g} of the largest output on the timing input, tolerance {:g}), a "
      "known PyTorch 1.13 miscompilation",
      out.optimized_error, kOptimizeForInferenceTolerance);
  if (frozen_error > kOptimizeForInferenceTolerance) {  // freezing alone miscomputes too: time the model as given
    out.module = original;
    out.note = fmt::format(
        "the frozen float baseline is the model as given: torch::jit::optimize_for_inference and torch::jit::freeze "
        "changed this model's outputs (largest differences {:.3g} and {:.3g} of the largest output on the timing "
        "input, tolerance {:g})",
        out.optimized_error, frozen_error, kOptimizeForInferenceTolerance);
  }
  return out;
}

}  // namespace lite::measure

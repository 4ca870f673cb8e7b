// Dynamic int8: Linear weights quantized to int8 ahead of time; each call quantizes the activations
// with a range measured on that very input (quantized::linear_dynamic), so no calibration is needed.
// The same torch::jit passes as static mode with QuantType::DYNAMIC. libtorch's graph mode covers
// Linear (and embedding bags) only: convolutions, LSTM and GRU stay float.
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/fold_conv_bn.h>
#include <torch/csrc/jit/passes/quantization/finalize.h>
#include <torch/csrc/jit/passes/quantization/insert_observers.h>
#include <torch/csrc/jit/passes/quantization/insert_quant_dequant.h>
#include <torch/csrc/jit/passes/remove_dropout.h>

#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

class DynamicScheme final : public Scheme {
 public:
  std::string layer_scheme(const LayerInfo& l) const override {
    if (l.kind == "Linear") return "int8 dynamic (int8 weights, activations quantized per call)";
    return {};
  }
  std::string keep_float_reason(const LayerInfo& l) const override { return small_layer_reason(l); }
  uint64_t layer_bytes(const LayerInfo& l) const override {
    uint64_t channels = l.weight_shape.empty() ? 1 : static_cast<uint64_t>(l.weight_shape[0]);
    return l.weight_elements() + channels * 12 + 4 * static_cast<uint64_t>(l.bias);
  }

  void build(BuildContext& ctx) const override {
    torch::NoGradGuard no_grad;
    const bool per_channel = ctx.plan.engine != "qnnpack";
    torch::jit::Module m = ctx.source.module.clone();
    m.eval();
    m = torch::jit::FoldConvBatchNorm(m);
    auto dict = make_qconfig_dict(ctx.plan, {make_activation_observer(), make_weight_observer(per_channel)});
    torch::jit::Module observed =
        torch::jit::InsertObservers(m, "forward", dict, /*inplace=*/false, torch::jit::QuantType::DYNAMIC);
    observed = torch::jit::InsertQuantDeQuant(observed, "forward", /*inplace=*/true, /*debug=*/false,
                                              torch::jit::QuantType::DYNAMIC);
    torch::jit::Module q = torch::jit::Finalize(observed, torch::jit::QuantType::DYNAMIC, {});
    auto graph = q.get_method("forward").graph();
    torch::jit::removeDropout(graph);
    torch::jit::ConstantPropagation(graph);
    torch::jit::EliminateDeadCode(graph);
    ctx.details["weights"] = per_channel ? "int8 symmetric, per output channel" : "int8 symmetric, per tensor";
    ctx.details["activations"] = "quantized per call (range of each input)";
    ctx.details["quantized_ops"] = count_quantized_ops(q);
    ctx.result = q;
  }
};

}  // namespace

const Scheme& dynamic_scheme() {
  static const DynamicScheme scheme;
  return scheme;
}

}  // namespace lite::quantize

// Dynamic int8: Linear weights quantized to int8 ahead of time; each call quantizes the activations
// with a range measured on that very input (quantized::linear_dynamic), so no calibration is needed.
// The same torch::jit passes as static mode (graph_mode_int8) with QuantType::DYNAMIC. libtorch's graph
// mode covers Linear (and embedding bags) only: convolutions stay float; LSTM and GRU layers are rewritten to
// libtorch's dynamic int8 recurrent ops afterwards (dynamic_recurrent.cpp), and nn.MultiheadAttention's projections,
// which graph mode cannot reach, to quantized::linear_dynamic (dynamic_attention.cpp); embedding tables are stored
// int8 per row (dynamic_embedding.cpp).
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
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
  uint64_t layer_bytes(const LayerInfo& l) const override { return int8_layer_bytes(l); }

  void build(BuildContext& ctx) const override {
    torch::NoGradGuard no_grad;
    torch::jit::Module q = graph_mode_int8(ctx, torch::jit::QuantType::DYNAMIC);
    auto graph = q.get_method("forward").graph();
    torch::jit::removeDropout(graph);
    torch::jit::ConstantPropagation(graph);
    torch::jit::EliminateDeadCode(graph);
    if (int recurrent = quantize_recurrent_dynamic(q)) ctx.details["recurrent_layers_int8"] = recurrent;
    if (int tables = quantize_embedding_tables(q)) ctx.details["embedding_tables_int8"] = tables;
    if (ctx.decoder)
      if (int moved = move_channel_scales_out(q)) ctx.details["linears_scales_after_kernel"] = moved;
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

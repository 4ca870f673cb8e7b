// fp16: the planned layers' weights are stored as float16 in the frozen graph and converted back to
// float32 where they are used; compute stays float32. libtorch 1.13 has no fast float16 convolution on
// CPU (whatever the CPU: the report's note says whether this machine has AVX512-FP16), so fp16 buys size,
// not speed (use bf16 for half-precision compute). Biases stay float32.
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

const char* kFp16Source = R"JIT(
def lite_from_fp16(w: Tensor) -> Tensor:
    return w.float()
)JIT";

class Fp16Scheme final : public Scheme {
 public:
  std::string layer_scheme(const LayerInfo&) const override { return "float16 weights, float32 compute"; }
  uint64_t layer_bytes(const LayerInfo& l) const override {
    return 2 * l.weight_elements() + 4 * static_cast<uint64_t>(l.bias);
  }
  void build(BuildContext& ctx) const override {
    FrozenModel f = freeze_with_layers(ctx.source, ctx.plan);
    for (const auto& fl : f.layers) {
      if (!fl.plan->quantized) continue;
      auto w = torch::jit::toIValue(fl.weight)->toTensor();
      torch::jit::Node* after = fl.weight->node()->next();
      torch::jit::WithInsertPoint guard(after);
      auto* half = f.graph->insertConstant(w.to(torch::kHalf));
      auto out = insert_function(*f.graph, after, kFp16Source, "lite_from_fp16", {half});
      fl.weight->replaceAllUsesWith(out.at(0));
    }
    ctx.notes = f.notes("keep float32 weights");
    torch::jit::EliminateDeadCode(f.graph);
    ctx.details["weights"] = "float16, converted to float32 where used";
    ctx.result = f.module;
  }
};

}  // namespace

const Scheme& fp16_scheme() {
  static const Fp16Scheme scheme;
  return scheme;
}

}  // namespace lite::quantize

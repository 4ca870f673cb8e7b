// bf16: the whole frozen graph runs in bfloat16 (weights, activations, oneDNN's AVX512-BF16 kernels):
// float inputs are converted on entry, float outputs returned, so callers do not change. Layers the
// plan keeps in float run in float32 with conversions around them.
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

const char* kBf16Source = R"JIT(
def lite_to_bf16(x: Tensor) -> Tensor:
    if x.is_floating_point():
        return x.to(15)
    return x

def lite_to_float(x: Tensor) -> Tensor:
    if x.is_floating_point():
        return x.float()
    return x
)JIT";

bool is_float_tensor_constant(torch::jit::Node* n) {
  if (n->kind() != c10::prim::Constant) return false;
  auto v = torch::jit::toIValue(n->output());
  return v && v->isTensor() && v->toTensor().scalar_type() == torch::kFloat32;
}

void collect_constants(torch::jit::Block* b, std::vector<torch::jit::Node*>& out) {
  for (auto* n : b->nodes()) {
    if (is_float_tensor_constant(n)) out.push_back(n);
    for (auto* sub : n->blocks()) collect_constants(sub, out);
  }
}

class Bf16Scheme final : public Scheme {
 public:
  std::string layer_scheme(const LayerInfo&) const override { return "bfloat16 weights and compute"; }
  uint64_t layer_bytes(const LayerInfo& l) const override {
    return 2 * (l.weight_elements() + static_cast<uint64_t>(l.bias));
  }
  void build(BuildContext& ctx) const override {
    FrozenModel f = freeze_with_layers(ctx.source, ctx.plan);
    auto& g = *f.graph;
    std::set<torch::jit::Node*> float_nodes;
    std::set<torch::jit::Value*> float_weights;  // stay float32 for every use (views of them feed float layers)
    for (const auto& fl : f.layers) {
      if (fl.plan->quantized) continue;
      float_nodes.insert(fl.nodes.begin(), fl.nodes.end());
      float_weights.insert(fl.weight);
    }
    // Constants: bfloat16 copies for every use outside the float layers.
    std::vector<torch::jit::Node*> constants;
    collect_constants(g.block(), constants);
    for (auto* c : constants) {
      if (float_weights.count(c->output())) continue;
      auto t = torch::jit::toIValue(c->output())->toTensor();
      torch::jit::Value* bf = nullptr;
      const auto uses = c->output()->uses();  // a copy: replaceInput edits the list
      for (const auto& use : uses) {
        if (float_nodes.count(use.user)) continue;
        if (!bf) {
          torch::jit::WithInsertPoint guard(c);
          bf = g.insertConstant(t.to(torch::kBFloat16));
        }
        use.user->replaceInput(use.offset, bf);
      }
    }
    // Inputs on entry, outputs on return.
    torch::jit::Node* first = g.block()->nodes().front();
    for (size_t i = 1; i < g.inputs().size(); ++i) {
      auto* in = g.inputs()[i];
      if (!in->type()->cast<c10::TensorType>()) continue;
      auto out = insert_function(g, first, kBf16Source, "lite_to_bf16", {in});
      in->replaceAllUsesAfterNodeWith(out.at(0)->node(), out.at(0));
    }
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      auto* o = g.outputs()[i];
      if (!o->type()->cast<c10::TensorType>()) continue;
      auto out = insert_function(g, g.return_node(), kBf16Source, "lite_to_float", {o});
      g.return_node()->replaceInput(i, out.at(0));
    }
    // Float layers: float32 in, bfloat16 out.
    for (auto* n : float_nodes) {
      auto in = insert_function(g, n, kBf16Source, "lite_to_float", {n->input(0)});
      n->replaceInput(0, in.at(0));
      auto out = insert_function(g, n->next(), kBf16Source, "lite_to_bf16", {n->output()});
      n->output()->replaceAllUsesAfterNodeWith(out.at(0)->node(), out.at(0));
    }
    torch::jit::EliminateDeadCode(f.graph);
    ctx.notes = f.notes("run in bfloat16 like the rest of the graph");
    ctx.details["compute"] = "bfloat16 (oneDNN), float32 input and output";
    ctx.result = f.module;
  }
};

}  // namespace

const Scheme& bf16_scheme() {
  static const Bf16Scheme scheme;
  return scheme;
}

}  // namespace lite::quantize

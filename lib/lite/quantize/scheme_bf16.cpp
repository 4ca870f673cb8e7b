// bf16: the whole frozen graph runs in bfloat16 (weights, activations, oneDNN's AVX512-BF16 kernels):
// float inputs are converted on entry, float outputs returned, so callers do not change. Layers the
// plan keeps in float run in float32 with conversions around them, and so do two kinds libtorch 1.13 cannot run
// in bfloat16 here: transposed convolutions (its CPU bfloat16 path checks the weight as a plain convolution's:
// "weight of size [8, 3, 2, 2], expected input[...] to have 3 channels") and LSTM/GRU/RNN ops (their state,
// which the module makes, and their weights must share one dtype).
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <fmt/format.h>

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

bool is_recurrent(const torch::jit::Node* n) {
  return n->kind() == c10::aten::lstm || n->kind() == c10::aten::gru || n->kind() == c10::aten::rnn_tanh ||
         n->kind() == c10::aten::rnn_relu;
}

void collect_recurrent_ops(torch::jit::Block* b, std::vector<torch::jit::Node*>& out) {
  for (auto* n : b->nodes()) {
    if (is_recurrent(n)) out.push_back(n);
    for (auto* sub : n->blocks()) collect_recurrent_ops(sub, out);
  }
}

// The list nodes that hand a recurrent op its weight constants: those keep float32 for these uses.
std::set<torch::jit::Node*> recurrent_weight_lists(const std::vector<torch::jit::Node*>& recurrent) {
  std::set<torch::jit::Node*> lists;
  for (auto* n : recurrent)
    for (auto* in : n->inputs())
      if (in->node()->kind() == c10::prim::ListConstruct) lists.insert(in->node());
  return lists;
}

// A recurrent op runs in float32: its tensor inputs (state lists element by element; weights are constants kept
// float32) are converted to float32, its tensor outputs back to bfloat16.
void run_recurrent_in_float(torch::jit::Graph& g, torch::jit::Node* n) {
  for (size_t i = 0; i < n->inputs().size(); ++i) {
    torch::jit::Value* in = n->input(i);
    if (in->type()->cast<c10::TensorType>()) {
      n->replaceInput(i, insert_function(g, n, kBf16Source, "lite_to_float", {in}).at(0));
    } else if (in->node()->kind() == c10::prim::ListConstruct) {
      torch::jit::Node* list = in->node();
      for (size_t j = 0; j < list->inputs().size(); ++j)
        if (list->input(j)->node()->kind() != c10::prim::Constant)
          list->replaceInput(j, insert_function(g, list, kBf16Source, "lite_to_float", {list->input(j)}).at(0));
    }
  }
  torch::jit::Node* after = n->next();
  for (auto* out : n->outputs()) {
    if (!out->type()->cast<c10::TensorType>()) continue;
    auto bf = insert_function(g, after, kBf16Source, "lite_to_bf16", {out});
    out->replaceAllUsesAfterNodeWith(bf.at(0)->node(), bf.at(0));
  }
}

class Bf16Scheme final : public Scheme {
 public:
  std::string layer_scheme(const LayerInfo&) const override { return "bfloat16 weights and compute"; }
  std::string unsupported_reason(const LayerInfo& l) const override {
    if (l.kind.rfind("ConvTranspose", 0) != 0) return {};
    return "libtorch 1.13's bfloat16 transposed convolution fails on CPU: runs in float32 between conversions";
  }
  uint64_t layer_bytes(const LayerInfo& l) const override {
    return 2 * (l.weight_elements() + static_cast<uint64_t>(l.bias));
  }
  // Emulated bf16 measured 20-50x slower than float32 (torchvision swin_t 6,066 ms against 119 ms at batch 1,
  // r3d_18 21x, issue 42): building and timing it costs minutes and cannot win.
  std::string cpu_problem(const Environment& env) const override {
    if (has_native_bf16(env)) return {};
    return fmt::format("not tried: bf16 runs emulated here (oneDNN ISA {}, no avx512_bf16 or amx_bf16 kernels), "
                       "many times slower than float32; --mode bf16 times it anyway",
                       env.onednn_isa.empty() ? "unknown" : env.onednn_isa);
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
    std::vector<torch::jit::Node*> recurrent;
    collect_recurrent_ops(g.block(), recurrent);
    const auto weight_lists = recurrent_weight_lists(recurrent);
    // Constants: bfloat16 copies for every use outside the float layers.
    std::vector<torch::jit::Node*> constants;
    collect_constants(g.block(), constants);
    for (auto* c : constants) {
      if (float_weights.count(c->output())) continue;
      auto t = torch::jit::toIValue(c->output())->toTensor();
      torch::jit::Value* bf = nullptr;
      const auto uses = c->output()->uses();  // a copy: replaceInput edits the list
      for (const auto& use : uses) {
        if (float_nodes.count(use.user) || weight_lists.count(use.user)) continue;
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
    for (auto* n : recurrent) run_recurrent_in_float(g, n);
    if (!recurrent.empty()) ctx.details["float32_recurrent_ops"] = recurrent.size();
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

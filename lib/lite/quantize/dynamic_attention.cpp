// Dynamic int8 for nn.MultiheadAttention's projections, which libtorch's graph-mode passes cannot reach: the
// module hands in_proj_weight and out_proj.weight to F.multi_head_attention_forward as arguments, and the
// passes only quantize a linear whose weight they can trace to a module attribute. PyTorch's own dynamic
// quantization leaves them float too (out_proj is a NonDynamicallyQuantizableLinear). In the finalized (frozen)
// graph, freezing has inlined the module into its caller and made the weights constants: each aten::linear
// whose weight is a planned attention weight (or a row slice of the packed in_proj weight) becomes
// quantized::linear_dynamic over the int8 weight (symmetric, per output channel) prepacked with its bias, the
// op graph mode writes for a dynamic Linear. Static mode uses it too: the projections' inputs come from
// layer norms and softmax products no observer sees, so there they are dynamic int8 inside the static model.
//
// Before matching, self-attention's `query is key` / `key is value` tests are decided: after freezing the three
// arguments are one value (`self_attn(x, x, x)`), sometimes through an `if` whose branches return the same value
// for each once common subexpressions are merged (the unsqueeze of an unbatched input, the batch-first
// transpose). Deciding them drops the cross-attention path, whose split copies of in_proj_weight would otherwise
// stay in the file. Where cross-attention stays (a decoder's `multihead_attn(x, memory, memory)`), its path splits
// in_proj_weight by sizes read from the query at run time; those are fixed by the weight itself, so the split is
// folded into constant q / kv slices that match like any other row slice.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/common_subexpression_elimination.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <set>

#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

// Outputs i < j of an `if` that every branch returns the same value for are one value: uses of j read i.
bool merge_equal_if_outputs(Block* block) {
  bool changed = false;
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) changed = merge_equal_if_outputs(b) || changed;
    if (n->kind() != c10::prim::If) continue;
    for (size_t j = 1; j < n->outputs().size(); ++j) {
      if (!n->output(j)->hasUses()) continue;
      for (size_t i = 0; i < j; ++i) {
        bool same = true;
        for (Block* b : n->blocks()) same = same && b->outputs()[i] == b->outputs()[j];
        if (!same) continue;
        n->output(j)->replaceAllUsesWith(n->output(i));
        changed = true;
        break;
      }
    }
  }
  return changed;
}

// `a is a` is true and `a is not a` false: one value is one object.
bool fold_self_identity(torch::jit::Graph& graph, Block* block) {
  bool changed = false;
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) changed = fold_self_identity(graph, b) || changed;
    const bool is = n->kind() == c10::aten::__is__, is_not = n->kind() == c10::aten::__isnot__;
    if (!(is || is_not) || n->input(0) != n->input(1) || !n->output()->hasUses()) continue;
    torch::jit::WithInsertPoint guard(n);
    n->output()->replaceAllUsesWith(graph.insertConstant(is));
    changed = true;
  }
  return changed;
}

// The one int that every element of `list` (a prim::ListConstruct) is a constant multiple of: `E` for
// [E, E * 2]; the multiples go to `factors`. nullptr when the list holds anything else.
Value* common_factor(Node* list, std::vector<int64_t>& factors) {
  Value* base = nullptr;
  for (Value* element : list->inputs()) {
    Value* v = element;
    int64_t factor = 1;
    Node* def = element->node();
    if (def->kind() == c10::aten::mul && def->inputs().size() == 2) {
      for (size_t side = 0; side < 2; ++side) {
        auto c = torch::jit::toIValue(def->input(side));
        if (!c || !c->isInt()) continue;
        factor = c->toInt();
        v = def->input(1 - side);
        break;
      }
    }
    if (torch::jit::toIValue(v) || factor <= 0 || (base && v != base)) return nullptr;
    base = v;
    factors.push_back(factor);
  }
  return base;
}

// A constant tensor split along a constant dim by sizes that are multiples of one run-time int (`E` in
// F._in_projection_packed's `w.split([E, E * 2])`) can only be split one way: split_with_sizes requires the sizes
// to sum to the tensor's size, which fixes the int. The unpacked parts become constants of their own (cloned: a
// view would keep the whole tensor's storage in the file). Returns how many splits were folded.
int fold_constant_splits(torch::jit::Graph& graph, Block* block) {
  int folded = 0;
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) folded += fold_constant_splits(graph, b);
    if (n->kind() != c10::aten::split && n->kind() != c10::aten::split_with_sizes) continue;
    auto tensor = torch::jit::toIValue(n->input(0));
    const c10::optional<c10::IValue> dim =
        n->inputs().size() > 2 ? torch::jit::toIValue(n->input(2)) : c10::optional<c10::IValue>();
    Node* list = n->input(1)->node();
    if (!tensor || !tensor->isTensor() || !dim || !dim->isInt() || list->kind() != c10::prim::ListConstruct ||
        n->output()->uses().size() != 1)
      continue;
    Node* unpack = n->output()->uses()[0].user;
    std::vector<int64_t> factors;
    if (unpack->kind() != c10::prim::ListUnpack || unpack->outputs().size() != list->inputs().size() ||
        !common_factor(list, factors))
      continue;
    const torch::Tensor& t = tensor->toTensor();
    const int64_t d = dim->toInt() < 0 ? dim->toInt() + t.dim() : dim->toInt();
    int64_t total = 0;
    for (int64_t f : factors) total += f;
    if (d < 0 || d >= t.dim() || t.size(d) % total != 0) continue;
    std::vector<int64_t> sizes;
    for (int64_t f : factors) sizes.push_back(f * (t.size(d) / total));
    const auto parts = t.split_with_sizes(sizes, d);
    torch::jit::WithInsertPoint guard(n);
    for (size_t i = 0; i < parts.size(); ++i)
      unpack->output(i)->replaceAllUsesWith(graph.insertConstant(parts[i].clone()));
    ++folded;
  }
  return folded;
}

void decide_self_attention(std::shared_ptr<torch::jit::Graph>& graph) {
  for (int round = 0; round < 8; ++round) {  // each round can expose the next (nested ifs)
    torch::jit::EliminateCommonSubexpression(graph);  // `query.unsqueeze(1)`, `key.unsqueeze(1)` of one value
    const bool merged = merge_equal_if_outputs(graph->block());
    if (!fold_self_identity(*graph, graph->block()) && !merged) break;
    torch::jit::ConstantPropagation(graph);
    torch::jit::EliminateDeadCode(graph);
  }
}

// The engine's packed form of an int8 weight and its bias (LinearPackedParamsBase), as graph mode stores it.
c10::IValue prepack_linear(const torch::Tensor& qweight, const torch::Tensor& bias) {
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
  torch::jit::Stack stack{qweight, bias.defined() ? c10::IValue(bias) : c10::IValue()};
  op.callBoxed(&stack);
  return stack.at(0);
}

void collect_float_linears(Block* block, std::vector<Node*>& out) {
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) collect_float_linears(b, out);
    if (n->kind() == c10::aten::linear && n->input(1)->node()->kind() == c10::prim::Constant) out.push_back(n);
  }
}

// The constant bias of a linear: an undefined tensor for None, nullopt when it is computed.
std::optional<torch::Tensor> constant_bias(Value* v) {
  auto c = torch::jit::toIValue(v);
  if (!c) return std::nullopt;
  if (c->isNone()) return torch::Tensor();
  if (!c->isTensor()) return std::nullopt;
  return c->toTensor();
}

// Which planned weight `w` is, by identity (match_weight) or else by value: a model that eval specialization
// rewrote reaches Finalize with copies of the attention weights, whole or as the q/k/v row slices that freezing
// folded. Equal values are the same weight (freezing pools equal constants anyway).
std::optional<WeightMatch> match_attention_weight(const torch::Tensor& w, const std::vector<torch::Tensor>& planned) {
  if (auto same = match_weight(w, planned)) return same;
  for (size_t i = 0; i < planned.size(); ++i) {
    const torch::Tensor& p = planned[i];
    if (p.dim() != 2 || w.size(1) != p.size(1) || w.size(0) > p.size(0) || w.scalar_type() != p.scalar_type())
      continue;
    const int64_t rows = w.size(0);
    for (int64_t r = 0; r + rows <= p.size(0); ++r)
      if (p[r].equal(w[0]) && p.narrow(0, r, rows).equal(w)) return WeightMatch{i, rows != p.size(0), true, r};
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> quantize_attention_dynamic(torch::jit::Module& module,
                                                    const std::map<std::string, torch::Tensor>& planned) {
  if (planned.empty()) return {};
  auto graph = module.get_method("forward").graph();
  decide_self_attention(graph);
  // A folded part may still pass through an op of constants (graph mode clones a bias it reads).
  if (fold_constant_splits(*graph, graph->block()) > 0) {
    torch::jit::ConstantPropagation(graph);
    torch::jit::EliminateDeadCode(graph);
  }
  std::vector<std::string> names;
  std::vector<torch::Tensor> weights;
  for (const auto& [name, w] : planned) {
    names.push_back(name);
    weights.push_back(w.detach());
  }
  std::vector<Node*> linears;
  collect_float_linears(graph->block(), linears);
  std::set<std::string> converted;
  for (Node* n : linears) {
    const torch::Tensor w = torch::jit::toIValue(n->input(1))->toTensor();
    if (w.dim() != 2 || w.scalar_type() != torch::kFloat) continue;
    const auto match = match_attention_weight(w, weights);
    const auto bias = constant_bias(n->input(2));
    if (!match || (match->view && !match->sliceable) || !bias) continue;
    torch::jit::WithInsertPoint guard(n);
    Value* packed = graph->insertConstant(prepack_linear(quantize_rows(w), *bias));
    // reduce_range as graph mode writes it for dynamic Linear, so every int8 linear of the model agrees
    Value* q = graph->insert(c10::Symbol::fromQualString("quantized::linear_dynamic"), {n->input(0), packed, true});
    q->setType(n->output()->type());
    n->output()->replaceAllUsesWith(q);
    n->destroy();
    converted.insert(names[match->layer]);
  }
  torch::jit::EliminateDeadCode(graph);
  // Freezing pools equal constants: layers with equal weights (an untrained nn.TransformerEncoder's deep-copied
  // layers) share one constant, converted once for all of them.
  for (size_t i = 0; i < names.size(); ++i)
    for (const auto& done : std::set<std::string>(converted))
      if (!converted.count(names[i]) && weights[i].sizes() == planned.at(done).sizes() &&
          weights[i].equal(planned.at(done)))
        converted.insert(names[i]);
  return {converted.begin(), converted.end()};
}

}  // namespace lite::quantize

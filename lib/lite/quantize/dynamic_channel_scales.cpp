// A decoder's dynamic int8 linears with their per-channel weight scales applied outside the kernel. A decode step
// runs every linear layer on one row per sequence, and there PyTorch 1.13's oneDNN dynamic int8 linear costs more
// with a scale per output channel than with one per tensor: GPT-2-small (73 linears) at 2 threads took 61-66 ms a
// token per channel against 48-54 ms per tensor (PyTorch's own quantize_dynamic, both qconfigs), while per-tensor
// weights lose 7x more perplexity on the bench's trained decoder (+1.38% against +0.20%). Both at once: the int8
// values stay those of the per-channel quantization; the kernel gets them as one tensor of scale 1 with no bias, and
// the scales and the bias follow as an in-place multiply and add on its output (the same products, rounded once
// more in float: about 1e-7 relative). lite's GPT-2-small artifact then took 48.4 ms a token, PyTorch's per-tensor
// file 51.1 (62.8 before). For decoders only: at hundreds of rows per call (a classifier's batch, a long prefill)
// the extra pass over the output costs about what the kernel saves.
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <map>

#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

using torch::jit::Node;
using torch::jit::Value;

// The packed weight as int8 values of scale 1 (no bias), its per-channel scales and its bias; nullopt when the weight
// is not symmetric per channel (nothing to move out).
struct Split {
  c10::IValue packed;
  torch::Tensor scales;
  torch::Tensor bias;  // undefined: none
};

std::optional<Split> split_scales(const c10::IValue& packed) {
  const torch::jit::Stack stack = call_op("quantized::linear_unpack", {packed});
  const torch::Tensor w = stack.at(0).toTensor();
  if (w.qscheme() != c10::kPerChannelAffine && w.qscheme() != c10::kPerChannelSymmetric) return std::nullopt;
  if (w.q_per_channel_axis() != 0 || w.q_per_channel_zero_points().ne(0).any().item<bool>()) return std::nullopt;
  Split s;
  s.scales = w.q_per_channel_scales().to(torch::kFloat).contiguous();
  if (!stack.at(1).isNone()) s.bias = stack.at(1).toTensor().to(torch::kFloat).contiguous();
  const torch::Tensor ones = at::_make_per_tensor_quantized_tensor(w.int_repr(), 1.0, 0);
  s.packed = call_op("quantized::linear_prepack", {ones, c10::IValue()}).at(0);
  return s;
}

void collect_dynamic_linears(torch::jit::Block* block, std::vector<Node*>& out) {
  for (Node* n : block->nodes()) {
    for (auto* b : n->blocks()) collect_dynamic_linears(b, out);
    if (n->kind().toQualString() == std::string("quantized::linear_dynamic")) out.push_back(n);
  }
}

// y -> y.mul_(scales).add_(bias) right after `n`, every later use of y reading the result.
void apply_after(torch::jit::Graph& graph, Node* n, const Split& s) {
  Value* y = n->output();
  torch::jit::WithInsertPoint guard(n->next());
  Value* out = graph.insert(c10::aten::mul_, {y, graph.insertConstant(s.scales)});
  if (s.bias.defined()) out = graph.insert(c10::aten::add_, {out, graph.insertConstant(s.bias)});
  out->setType(y->type());
  y->replaceAllUsesAfterNodeWith(out->node(), out);
}

}  // namespace

int move_channel_scales_out(torch::jit::Module& module) {
  auto graph = module.get_method("forward").graph();
  Value* self = graph->inputs().at(0);
  std::vector<Node*> linears;
  collect_dynamic_linears(graph->block(), linears);
  std::map<std::string, std::optional<Split>> by_attribute;  // a packed weight read in two branches is split once
  int moved = 0;
  for (Node* n : linears) {
    Value* weight = n->input(1);
    std::optional<Split> split;
    if (const std::string attr = packed_attribute(weight, self); !attr.empty()) {
      if (!by_attribute.count(attr)) {
        by_attribute[attr] = split_scales(module.attr(attr));
        if (by_attribute[attr]) module.setattr(attr, by_attribute[attr]->packed);
      }
      split = by_attribute[attr];
    } else if (weight->node()->kind() == c10::prim::Constant) {
      split = split_scales(*torch::jit::toIValue(weight));
      if (split) {
        torch::jit::WithInsertPoint guard(n);
        n->replaceInput(1, graph->insertConstant(split->packed));
      }
    }
    if (!split) continue;
    apply_after(*graph, n, *split);
    ++moved;
  }
  torch::jit::EliminateDeadCode(graph);
  return moved;
}

}  // namespace lite::quantize

// Dynamic int8 for LSTM and GRU layers, which libtorch's graph-mode passes leave float (PyTorch quantizes them
// only as eager modules, torch.ao.nn.quantized.dynamic.LSTM/GRU). In the finalized (frozen) graph, each
// aten::lstm / aten::gru whose weights are constants becomes aten::quantized_lstm / quantized_gru over one
// CellParamsBase per layer and direction: int8 weights (symmetric, per output channel) prepacked with their
// biases for the engine, exactly the objects the eager modules build (make_quantized_cell_params_dynamic),
// so the artifact loads in stock PyTorch. Activations are quantized per call, as for dynamic Linear.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

using torch::jit::Node;
using torch::jit::Value;

c10::IValue call_op(const char* name, const char* overload, std::vector<c10::IValue> args) {
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  torch::jit::Stack stack(std::move(args));
  op.callBoxed(&stack);
  return stack.at(0);
}

// The weight tensors of a recurrent op's parameter list when they are constants (a frozen graph), else empty.
std::vector<torch::Tensor> constant_tensors(Value* params) {
  std::vector<torch::Tensor> out;
  if (auto list = torch::jit::toIValue(params)) {
    if (!list->isList()) return {};
    for (const auto& e : list->toListRef()) {
      if (!e.isTensor()) return {};
      out.push_back(e.toTensor());
    }
    return out;
  }
  if (params->node()->kind() != c10::prim::ListConstruct) return {};
  for (Value* v : params->node()->inputs()) {
    auto t = torch::jit::toIValue(v);
    if (!t || !t->isTensor()) return {};
    out.push_back(t->toTensor());
  }
  return out;
}

std::optional<bool> constant_bool(Value* v) {
  auto c = torch::jit::toIValue(v);
  if (!c || !c->isBool()) return std::nullopt;
  return c->toBool();
}

std::optional<int64_t> constant_int(Value* v) {
  auto c = torch::jit::toIValue(v);
  if (!c || !c->isInt()) return std::nullopt;
  return c->toInt();
}

// Replaces one aten::lstm / aten::gru node; false (and nothing changed) when it does not have the plain form:
// constant weights with biases, no projections (LSTM proj_size adds a fifth weight per layer).
bool rewrite(torch::jit::Graph& graph, Node* n, bool lstm) {
  const auto tensors = constant_tensors(n->input(2));
  const auto has_biases = constant_bool(n->input(3));
  const auto layers = constant_int(n->input(4));
  const auto bidirectional = constant_bool(n->input(7));
  if (tensors.empty() || !has_biases || !*has_biases || !layers || !bidirectional) return false;
  const size_t cells = size_t(*layers) * (*bidirectional ? 2 : 1);
  if (tensors.size() != 4 * cells || !plain_recurrent_weights(tensors)) return false;
  std::vector<Value*> params;
  torch::jit::WithInsertPoint guard(n);
  for (size_t i = 0; i < cells; ++i) {
    const auto& w_ih = tensors[4 * i];
    const auto& w_hh = tensors[4 * i + 1];
    const auto& b_ih = tensors[4 * i + 2];
    const auto& b_hh = tensors[4 * i + 3];
    if (w_ih.scalar_type() != torch::kFloat || w_ih.dim() != 2) return false;
    auto packed_ih = call_op("quantized::linear_prepack", "", {quantize_rows(w_ih), b_ih});
    auto packed_hh = call_op("quantized::linear_prepack", "", {quantize_rows(w_hh), b_hh});
    auto cell = call_op("quantized::make_quantized_cell_params_dynamic", "",
                        {packed_ih, packed_hh, b_ih, b_hh, c10::IValue(false)});
    params.push_back(graph.insertConstant(cell));
  }
  Value* list = graph.insertNode(graph.createList(params.front()->type(), params))->output();
  std::vector<torch::jit::NamedValue> args;
  for (size_t i = 0; i < n->inputs().size(); ++i) args.emplace_back(i == 2 ? list : n->input(i));
  std::vector<torch::jit::NamedValue> kwargs;
  if (lstm) {
    kwargs.emplace_back("dtype", c10::IValue(int64_t(c10::ScalarType::QInt8)));
    kwargs.emplace_back("use_dynamic", c10::IValue(true));
  }
  Value* result = graph.insert(c10::Symbol::fromQualString(lstm ? "aten::quantized_lstm" : "aten::quantized_gru"),
                               args, kwargs);
  Node* unpack = graph.insertNode(graph.createTupleUnpack(result));
  if (unpack->outputs().size() != n->outputs().size()) {
    unpack->destroy();
    return false;
  }
  for (size_t i = 0; i < n->outputs().size(); ++i) n->output(i)->replaceAllUsesWith(unpack->output(i));
  return true;
}

void collect_recurrent(torch::jit::Block* block, std::vector<Node*>& out) {
  for (Node* n : block->nodes()) {
    if (n->kind() == c10::aten::lstm || n->kind() == c10::aten::gru) out.push_back(n);
    for (auto* b : n->blocks()) collect_recurrent(b, out);
  }
}

}  // namespace

torch::Tensor quantize_rows(const torch::Tensor& w) {
  torch::Tensor scales = (w.abs().amax(1).clamp_min(1e-8) / 127.5).to(torch::kDouble);
  return at::quantize_per_channel(w.contiguous(), scales, torch::zeros_like(scales, torch::kLong), 0, torch::kQInt8);
}

bool plain_recurrent_weights(const std::vector<torch::Tensor>& tensors) {
  if (tensors.empty() || tensors.size() % 4 != 0) return false;
  for (size_t i = 0; i < tensors.size(); i += 4)
    if (tensors[i].dim() != 2 || tensors[i + 1].dim() != 2 || tensors[i + 2].dim() != 1 || tensors[i + 3].dim() != 1)
      return false;
  return true;
}

int quantize_recurrent_dynamic(torch::jit::Module& module) {
  auto graph = module.get_method("forward").graph();
  std::vector<Node*> nodes;
  collect_recurrent(graph->block(), nodes);
  int rewritten = 0;
  for (Node* n : nodes) {
    if (n->inputs().size() < 9) continue;
    if (rewrite(*graph, n, n->kind() == c10::aten::lstm)) {
      n->destroy();
      ++rewritten;
    }
  }
  if (rewritten) torch::jit::EliminateDeadCode(graph);
  return rewritten;
}

}  // namespace lite::quantize

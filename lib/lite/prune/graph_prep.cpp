// The forward graph the dependency analysis walks: inlined, except attention, and with the branches that
// depend on the input decided by running it once.
//
// Attention stays a call: nn.MultiheadAttention's forward (F.multi_head_attention_forward inlined) is a few
// hundred nodes of views, transposes and `is` checks that no channel rule follows, while the module as a
// whole has a simple contract the analysis states directly (rules_attention.cpp, `attention`). Swin's
// ShiftedWindowAttention likewise: windows, heads and the cyclic shift are reshapes and rolls around two
// linears whose widths follow the channels of its input (rules_attention.cpp, `window_attention`).
//
// Branches: nn.TransformerEncoderLayer and nn.TransformerEncoder choose between a fused fast path and the
// unfused layers on the input's rank, device, grad mode and nesting: after attribute folding ~130 `if`s
// remain in a two-layer encoder. They do not depend on channel counts, so lite runs the graph once on the
// example input with every `if` logging its decision, and replaces each condition that always went one way
// by that constant. Fused ops (the encoder layer's and attention's fast paths) read the same weights as the
// unfused branch and follow their shapes, so a branch that takes one is flipped to the unfused branch,
// whose ops the analysis can read.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <vector>

#include "lite/model/fused_paths.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

bool is_window_attention_type(const c10::TypePtr& type) {
  auto cls = type->cast<c10::ClassType>();
  return cls && cls->name() && cls->name()->name() == "ShiftedWindowAttention";  // not V2 (its logit scale)
}

bool is_attention_type(const c10::TypePtr& type) {
  auto cls = type->cast<c10::ClassType>();
  if (!cls || !cls->name()) return false;
  const std::string name = cls->name()->qualifiedName();
  return name.find("MultiheadAttention") != std::string::npos || is_window_attention_type(type);
}

namespace {

bool inline_once(Block* block) {
  bool changed = false;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* n = *it++;
    if (n->kind() == c10::prim::CallMethod) {
      auto cls = n->input(0)->type()->cast<c10::ClassType>();
      if (!cls || is_attention_type(cls)) continue;
      if (auto* fn = torch::jit::tryToGraphFunction(cls->getMethod(n->s(c10::attr::name)))) {
        torch::jit::inlineCallTo(n, fn, /*inline_optimized_graph=*/false);  // optimized graphs are inlined all through
        changed = true;
      }
    } else if (n->kind() == c10::prim::CallFunction) {
      auto fn_type = n->input(0)->type()->cast<c10::FunctionType>();
      auto* fn = fn_type ? torch::jit::tryToGraphFunction(*fn_type->function()) : nullptr;
      if (!fn) continue;
      n->removeInput(0);
      torch::jit::inlineCallTo(n, fn, /*inline_optimized_graph=*/false);
      changed = true;
    } else {
      for (Block* b : n->blocks()) changed = inline_once(b) || changed;
    }
  }
  return changed;
}

// Runs a copy of `graph` on `example` with each `if` logging (its index, its condition); returns, per
// index, 1 or 0 when every visit went the same way, -1 when it was not reached or went both ways.
std::vector<int> observed_decisions(const std::shared_ptr<torch::jit::Graph>& graph, const torch::jit::Module& module,
                                    const std::vector<c10::IValue>& example) {
  auto probe = graph->copy();
  const std::vector<Node*> ifs = model::ifs_in(probe->block());
  std::vector<int> decisions(ifs.size(), -1);
  if (ifs.empty()) return decisions;
  Value *ids, *conditions;
  {
    torch::jit::WithInsertPoint start(probe->block()->nodes().front());
    ids = probe->insertNode(probe->createList(c10::IntType::get(), {}))->output();
    conditions = probe->insertNode(probe->createList(c10::BoolType::get(), {}))->output();
  }
  for (size_t i = 0; i < ifs.size(); ++i) {
    torch::jit::WithInsertPoint before(ifs[i]);
    probe->insert(c10::aten::append, {ids, probe->insertConstant(int64_t(i))});
    probe->insert(c10::aten::append, {conditions, ifs[i]->input(0)});
  }
  std::vector<Value*> outputs(probe->outputs().begin(), probe->outputs().end());
  outputs.push_back(ids);
  outputs.push_back(conditions);
  torch::jit::WithInsertPoint end(probe->return_node());
  Value* tuple = probe->insertNode(probe->createTuple(outputs))->output();
  while (!probe->outputs().empty()) probe->eraseOutput(0);
  probe->registerOutput(tuple);

  torch::jit::GraphFunction run("lite_prune_probe", probe, nullptr);
  std::vector<c10::IValue> stack{module._ivalue()};
  stack.insert(stack.end(), example.begin(), example.end());
  c10::IValue result;
  {
    torch::NoGradGuard no_grad;
    result = run(std::move(stack));
  }
  const auto& items = result.toTupleRef().elements();
  const auto logged_ids = items[items.size() - 2].toIntVector();
  const auto logged = items[items.size() - 1].toBoolList();
  for (size_t k = 0; k < logged_ids.size(); ++k) {
    int& d = decisions[size_t(logged_ids[k])];
    const int now = logged.get(k) ? 1 : 0;
    d = (d == -1 || d == now) ? now : -2;
  }
  for (int& d : decisions)
    if (d == -2) d = -1;
  return decisions;
}

}  // namespace

void inline_calls_except_attention(torch::jit::Graph& graph) {
  while (inline_once(graph.block())) {
  }
}

int decide_branches(std::shared_ptr<torch::jit::Graph>& graph, const torch::jit::Module& module,
                    const std::vector<c10::IValue>& example) {
  if (example.empty()) return 0;
  // Fused fast paths first: what the run then logs follows from the unfused branch (an early return
  // through the fused op would otherwise decide the later `if did_return` the wrong way).
  int decided = model::take_unfused_branches(graph, model::transformer_fused_ops());
  std::vector<int> decisions;
  try {
    decisions = observed_decisions(graph, module, example);
  } catch (const std::exception&) {
    return decided;  // the graph as the analysis sees it does not run on this input: the rest stay undecided
  }
  const std::vector<Node*> ifs = model::ifs_in(graph->block());
  for (size_t i = 0; i < ifs.size(); ++i) {
    if (decisions[i] < 0 || torch::jit::toIValue(ifs[i]->input(0))) continue;
    model::set_condition(*graph, ifs[i]->input(0), decisions[i] == 1);
    ++decided;
  }
  torch::jit::ConstantPropagation(graph);
  torch::jit::EliminateDeadCode(graph);
  return decided;
}

}  // namespace lite::prune

#include "lite/model/fused_paths.hpp"

#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

namespace lite::model {

namespace {

bool holds_any(torch::jit::Block* block, const std::set<std::string>& ops) {
  for (torch::jit::Node* n : block->nodes())
    if (ops.count(n->kind().toQualString())) return true;
  return false;
}

}  // namespace

std::vector<torch::jit::Node*> ifs_in(torch::jit::Block* block) {
  std::vector<torch::jit::Node*> ifs;
  for (torch::jit::Node* n : block->nodes()) {
    if (n->kind() == c10::prim::If) ifs.push_back(n);
    for (torch::jit::Block* b : n->blocks()) {
      auto inner = ifs_in(b);
      ifs.insert(ifs.end(), inner.begin(), inner.end());
    }
  }
  return ifs;
}

void set_condition(torch::jit::Graph& graph, torch::jit::Value* condition, bool value) {
  torch::jit::WithInsertPoint top(graph.block()->nodes().front());
  condition->replaceAllUsesWith(graph.insertConstant(value));
}

const std::set<std::string>& transformer_fused_ops() {
  static const std::set<std::string> ops = {"aten::_transformer_encoder_layer_fwd", "aten::_native_multi_head_attention"};
  return ops;
}

int take_unfused_branches(std::shared_ptr<torch::jit::Graph>& graph, const std::set<std::string>& fused_ops) {
  int decided = 0;
  for (torch::jit::Node* n : ifs_in(graph->block())) {
    const bool fused_then = holds_any(n->blocks()[0], fused_ops), fused_else = holds_any(n->blocks()[1], fused_ops);
    if (fused_then == fused_else || torch::jit::toIValue(n->input(0))) continue;
    set_condition(*graph, n->input(0), fused_else);
    ++decided;
  }
  if (decided) {
    torch::jit::ConstantPropagation(graph);
    torch::jit::EliminateDeadCode(graph);
  }
  return decided;
}

int prefer_unfused_paths(torch::jit::Module& module, const std::set<std::string>& fused_ops) {
  int decided = 0;
  std::set<const torch::jit::Graph*> done;
  for (const auto& named : module.named_modules())
    for (const auto& method : named.value.get_methods()) {
      auto graph = method.graph();
      if (done.insert(graph.get()).second) decided += take_unfused_branches(graph, fused_ops);
    }
  return decided;
}

}  // namespace lite::model

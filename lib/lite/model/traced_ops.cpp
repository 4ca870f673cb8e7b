#include "lite/model/traced_ops.hpp"

#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/graph_rewrite_helper.h>

namespace lite::model {

namespace {

int count_kind(const torch::jit::Block* block, c10::Symbol kind) {
  int n = 0;
  for (const torch::jit::Node* node : block->nodes()) {
    n += node->kind() == kind;
    for (const torch::jit::Block* inner : node->blocks()) n += count_kind(inner, kind);
  }
  return n;
}

}  // namespace

int normalize_traced_convolutions(torch::jit::Module& module) {
  static const c10::Symbol convolution = c10::Symbol::fromQualString("aten::_convolution");
  int rewritten = 0;
  for (const auto& submodule : module.modules()) {
    for (const auto& method : submodule.get_methods()) {
      std::shared_ptr<torch::jit::Graph> graph = method.graph();
      const int before = count_kind(graph->block(), convolution);
      if (before == 0) continue;
      try {
        // The pattern reads stride, padding, ... as constants: a trace records them as lists of constants,
        // which constant propagation folds into list constants first.
        torch::jit::ConstantPropagation(graph);
        torch::jit::graph_rewrite_helper::replaceConvolutionWithAtenConv(graph);
      } catch (const std::exception&) {
        continue;  // left as traced: the passes then see fewer layers, as before
      }
      rewritten += before - count_kind(graph->block(), convolution);
    }
  }
  return rewritten;
}

}  // namespace lite::model

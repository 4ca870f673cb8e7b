// Weight-only int8 for embedding tables in dynamic and static modes, which graph mode leaves float (it quantizes
// embedding_bag only, and only with a qconfig of its own). A BERT-style encoder keeps most of its bytes in its
// token table: 8 of the bench encoder's 19.9 MiB. In the finalized (frozen) graph, each aten::embedding whose table
// is a constant becomes quantized::embedding_byte over the table packed as uint8 per row, with a float scale and
// zero point per row (per_channel_affine_float_qparams, the form quantized::embedding_bag_prepack takes): what
// PyTorch's eager torch.ao.nn.quantized.Embedding builds, so stock PyTorch loads the artifact. A lookup is a copy,
// so nothing is quantized per call: each row reads back within half its own step, (max - min) / 510.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

using torch::jit::Node;

// The table as uint8 per row, packed for quantized::embedding_byte.
c10::IValue pack_rows(const torch::Tensor& table) {
  const torch::Tensor lo = table.amin(1), hi = table.amax(1);
  const torch::Tensor scales = ((hi - lo) / 255).clamp_min(1e-8);
  const torch::Tensor zero_points = -lo / scales;  // float zero points: the scheme embedding_bag_prepack takes
  torch::Tensor q = at::quantize_per_channel(table.contiguous(), scales, zero_points, 0, torch::kQUInt8);
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::embedding_bag_prepack", "");
  torch::jit::Stack stack{q};
  op.callBoxed(&stack);
  return stack.at(0);
}

void collect_embeddings(torch::jit::Block* block, std::vector<Node*>& out) {
  for (Node* n : block->nodes()) {
    for (auto* b : n->blocks()) collect_embeddings(b, out);
    if (n->kind() == c10::aten::embedding && n->input(0)->node()->kind() == c10::prim::Constant) out.push_back(n);
  }
}

}  // namespace

bool plain_embedding_table(const torch::Tensor& table) {
  return table.dim() == 2 && table.scalar_type() == torch::kFloat && table.size(1) > 0;
}

int quantize_embedding_tables(torch::jit::Module& module) {
  auto graph = module.get_method("forward").graph();
  std::vector<Node*> nodes;
  collect_embeddings(graph->block(), nodes);
  int rewritten = 0;
  for (Node* n : nodes) {
    const torch::Tensor table = torch::jit::toIValue(n->input(0))->toTensor();
    if (!plain_embedding_table(table)) continue;
    torch::jit::WithInsertPoint guard(n);
    torch::jit::Value* packed = graph->insertConstant(pack_rows(table));
    // padding_idx, scale_grad_by_freq and sparse only matter to training
    torch::jit::Value* rows = graph->insert(c10::Symbol::fromQualString("quantized::embedding_byte"),
                                            {packed, n->input(1), false});
    rows->setType(n->output()->type());
    n->output()->replaceAllUsesWith(rows);
    n->destroy();
    ++rewritten;
  }
  if (rewritten) torch::jit::EliminateDeadCode(graph);
  return rewritten;
}

}  // namespace lite::quantize

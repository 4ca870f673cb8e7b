// A node with blocks (an `if` or a loop) that survived folding and branch decisions: lite cannot tell which
// branch runs, so everything it or its blocks read is blocked with "<kind> left after folding". An `if` with
// no outputs whose branches only read ranks, devices or grad flags before raising (batchnorm's
// _check_input_dim) reads nothing pruning changes and is skipped.
#include <functional>
#include <set>

#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

namespace {

// An `if` without outputs whose branches only read ranks, devices or grad flags (a guard that raises).
bool is_metadata_guard(Node* n) {
  static const std::set<std::string> metadata = {"aten::dim", "prim::device", "prim::is_cuda",
                                                 "prim::requires_grad", "aten::len"};
  if (!n->outputs().empty()) return false;
  std::function<bool(torch::jit::Block*)> reads_metadata_only = [&](torch::jit::Block* b) {
    for (Node* inner : b->nodes()) {
      for (auto* bb : inner->blocks())
        if (!reads_metadata_only(bb)) return false;
      bool metadata_read = metadata.count(inner->kind().toQualString()) > 0;
      for (Value* v : inner->inputs())
        if (carries_tensor(v->type()) && !metadata_read) return false;
      for (Value* v : inner->outputs())
        if (carries_tensor(v->type())) return false;
    }
    return true;
  };
  for (auto* b : n->blocks())
    if (!reads_metadata_only(b)) return false;
  return true;
}

}  // namespace

void control_rule(Walk& w, Node* n, const std::string& kind) {
  if (kind == "prim::If" && is_metadata_guard(n)) return;
  std::function<void(torch::jit::Block*)> scan = [&](torch::jit::Block* b) {
    for (Node* inner : b->nodes()) {
      for (Value* v : inner->inputs()) w.block_value(v, kind + " left after folding");
      for (auto* bb : inner->blocks()) scan(bb);
    }
    for (Value* v : b->outputs()) w.block_value(v, kind + " left after folding");
  };
  for (auto* b : n->blocks()) scan(b);
  w.unknown(n, kind + " left after folding");
}

}  // namespace lite::prune::detail

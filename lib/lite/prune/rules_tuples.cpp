// Tuples built in the graph: a trace flattens a submodule's dict or tuple result into prim::TupleConstruct
// and reads it back with prim::TupleUnpack (torchvision's IntermediateLayerGetter traced: the backbone's
// features reach the head through one), and a scripted `return a, b` of an inlined call does the same. A tuple
// of tensors carries each item's channels, so a read by position is the tensor stored there
// (tuple_item_rule, rules_attention.cpp, reads them back). An item that is itself a container (a list, a
// dict, a tuple) is not followed inside a tuple: it is blocked with the reason; anything else that reads the
// tuple blocks every item (Walk::unknown), and a tuple the model returns keeps its items' channels.
#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

void tuple_construct_rule(Walk& w, Node* n, const std::string& kind) {
  std::vector<std::optional<ValueInfo>> items;
  for (Value* v : n->inputs()) {
    const bool container = w.lists.count(v) || w.dicts.count(v) || w.tuples.count(v);
    if (container) w.block_value(v, kind + " of a container (a tuple holding a list, dict or tuple)");
    ValueInfo* vi = container ? nullptr : w.info(v);
    items.push_back(vi ? std::optional<ValueInfo>(*vi) : std::nullopt);
  }
  w.tuples[n->output()] = std::move(items);
}

}  // namespace lite::prune::detail

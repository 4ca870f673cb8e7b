// Rules for lists of tracked tensors and their concatenation. A list built by ListConstruct and grown by
// append (densenet's dense blocks) is followed item by item, so each cat reads the list as it stands at that
// point of the walk, and a read at a constant position is the item there. A list any other op reads has
// escaped: its items, and any appended later, are blocked.
// cat along the channels concatenates the spaces (consumers see each one at an offset); along another
// dimension (ViT's class token before the patches) every item carries the same channels and they are united.
#include <memory>

#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

// A list of tracked tensors, or of followed containers (a list of tuples or dicts, blocked with its items
// when it escapes), or an empty list of tensors that appends fill (torchvision's ASPP: `_res = []`, then one
// append per branch of an unrolled loop over a ModuleList).
void list_rule(Walk& w, Node* n, const std::string& /*kind*/) {
  bool tensors = n->inputs().empty() && carries_tensor(n->output()->type());
  for (Value* v : n->inputs())
    tensors = tensors || w.info(v) || w.lists.count(v) || w.dicts.count(v) || w.tuples.count(v);
  if (tensors)
    w.lists[n->output()] =
        std::make_shared<TensorList>(TensorList{std::vector<Value*>(n->inputs().begin(), n->inputs().end()), {}});
}

void append_rule(Walk& w, Node* n, const std::string& kind) {
  auto it = w.lists.find(n->input(0));
  if (it == w.lists.end()) return w.unknown(n, kind + " to a list lite cannot follow");
  if (!it->second->escaped.empty()) w.block_value(n->input(1), it->second->escaped);
  it->second->items.push_back(n->input(1));
  if (n->outputs().size() == 1 && carries_tensor(n->output()->type())) w.lists[n->output()] = it->second;
}

void cat_rule(Walk& w, Node* n, const std::string& kind) {
  auto items = w.lists.find(n->input(0));
  auto dim = torch::jit::toIValue(n->input(1));
  const std::string why = kind + " of tensors lite cannot follow";
  if (items == w.lists.end() || !dim || !dim->isInt() || items->second->items.empty()) return w.unknown(n, why);
  std::vector<ValueInfo> parts;
  for (Value* v : items->second->items) {
    ValueInfo* x = w.info(v);
    if (!x) return w.unknown(n, why);
    parts.push_back(*x);
  }
  auto channel = Walk::is_channel_dim(parts[0], dim->toInt());
  if (!channel) return w.unknown(n, why);
  ValueInfo y = parts[0];
  if (*channel) {
    y.segments.clear();
    for (const auto& x : parts) {
      if (x.layout != parts[0].layout) return w.unknown(n, why);
      y.segments.insert(y.segments.end(), x.segments.begin(), x.segments.end());
    }
  } else {
    for (const auto& x : parts)
      if (!w.unite_alike(parts[0], x, kind)) return w.unknown(n, kind + " of tensors with different channel layouts");
  }
  w.values[n->output()] = y;
}

// aten::list(list): a copy, holding the same items (appends to one do not reach the other). A list of what lite
// does not follow (names, sizes) carries no channels.
void list_copy_rule(Walk& w, Node* n, const std::string& kind) {
  auto it = w.lists.find(n->input(0));
  if (it == w.lists.end()) {
    if (carries_tensor(n->output()->type())) w.unknown(n, kind + " of a list lite cannot follow");
    return;
  }
  if (!it->second->escaped.empty()) return w.unknown(n, kind + " of a list lite cannot follow");
  w.lists[n->output()] = std::make_shared<TensorList>(TensorList{it->second->items, {}});
}

// list[i] at a constant position (negative from the end): the item there at this point of the walk. An index
// computed at run time (a loop's, unless graph_prep.cpp unrolled it), or a list that escaped, is unknown.
void list_item_rule(Walk& w, Node* n, const std::string& kind) {
  const auto& list = *w.lists.at(n->input(0));
  auto index = torch::jit::toIValue(n->input(1));
  const auto size = int64_t(list.items.size());
  int64_t i = index && index->isInt() ? index->toInt() : size;
  if (i < 0) i += size;
  if (!list.escaped.empty() || i < 0 || i >= size) return w.unknown(n, kind + " of a list item lite cannot follow");
  w.alias(n->output(), list.items[size_t(i)]);
}

}  // namespace lite::prune::detail

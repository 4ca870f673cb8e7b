// Rules for dicts of tracked values: torchvision's IntermediateLayerGetter stores the backbone's features
// under constant string keys (`out[return_layers[name]] = x`, the lookup folded to a constant by
// dependency_graph.cpp) and the segmentation head reads them back (`features["out"]`). Within one graph
// a read by a constant key IS the value last stored under that key, so it carries the same channel spaces
// and the backbone's width prunes through the dict, as Torch-Pruning follows it through Python. Anything
// else fences: a key that is not a constant string, a read of a key not stored, a dict built by an op
// with no rule, and any other op that reads the dict (items(), update, returning it) blocks
// every item it holds and every item stored later, with the op as the reason. values() is followed: a list of
// its items in the order their keys were first stored, as Python's dicts keep.
#include <memory>
#include <optional>

#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

namespace {

std::optional<std::string> constant_key(Value* v) {
  auto key = torch::jit::toIValue(v);
  if (!key || !key->isString()) return std::nullopt;
  return key->toStringRef();
}

}  // namespace

// prim::DictConstruct(k1, v1, k2, v2, ...), or an empty aten::dict() (`OrderedDict()` scripted): a dict lite
// follows when every key is a constant string. aten::dict of another dict or of pairs is unknown.
void dict_rule(Walk& w, Node* n, const std::string& kind) {
  if (!carries_tensor(n->output()->type())) return;
  if (kind == "aten::dict" && !n->inputs().empty()) return w.unknown(n, kind + " copied from a container");
  auto dict = std::make_shared<TensorDict>();
  for (size_t i = 0; i + 1 < n->inputs().size(); i += 2) {
    auto key = constant_key(n->input(i));
    if (!key) return w.unknown(n, kind + " with keys that are not constant strings");
    if (!dict->items.count(*key)) dict->order.push_back(*key);
    dict->items[*key] = n->input(i + 1);
  }
  w.dicts[n->output()] = dict;
}

// aten::_set_item(container, key, value): a constant key of a followed dict now holds the value.
void set_item_rule(Walk& w, Node* n, const std::string& kind) {
  auto it = w.dicts.find(n->input(0));
  auto key = constant_key(n->input(1));
  if (it == w.dicts.end() || !key) return w.unknown(n, kind + " into a container lite cannot follow");
  if (!it->second->escaped.empty()) w.block_value(n->input(2), it->second->escaped);
  if (!it->second->items.count(*key)) it->second->order.push_back(*key);  // a new key goes last, as in Python
  it->second->items[*key] = n->input(2);
}

// aten::__getitem__(container, key): the value a followed dict holds under a constant key; a followed list's
// item (list_item_rule). A dict lite does not follow is unknown.
void get_item_rule(Walk& w, Node* n, const std::string& kind) {
  if (w.lists.count(n->input(0))) return list_item_rule(w, n, kind);
  auto it = w.dicts.find(n->input(0));
  if (it == w.dicts.end()) return w.unknown(n, kind);
  auto key = constant_key(n->input(1));
  const auto& dict = *it->second;
  auto item = key ? dict.items.find(*key) : dict.items.end();
  if (!dict.escaped.empty() || item == dict.items.end())
    return w.unknown(n, kind + " of a dict key lite cannot follow");
  w.alias(n->output(), item->second);
}

// aten::values(dict): a new list of the tensors a followed dict holds, in the order their keys were first stored
// (a scripted FeaturePyramidNetwork's `list(x.values())`, read back by position once its loop is unrolled).
void values_rule(Walk& w, Node* n, const std::string& kind) {
  auto it = w.dicts.find(n->input(0));
  if (it == w.dicts.end() || !it->second->escaped.empty()) return w.unknown(n, kind);
  auto list = std::make_shared<TensorList>();
  for (const auto& key : it->second->order) list->items.push_back(it->second->items.at(key));
  w.lists[n->output()] = list;
}

}  // namespace lite::prune::detail

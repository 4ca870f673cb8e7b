// The tracked values of the dependency walk: what each rule reads (the channel spaces a value carries, the
// attribute it was read from) and the shared moves on them (blocking, adding weight slices, uniting two values
// that carry the same channels, reading a tensor attribute as a value). See dependency_rules_internal.hpp.
#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

bool carries_tensor(const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::TensorType) return true;
  for (const auto& t : type->containedTypes())
    if (carries_tensor(t)) return true;
  return false;
}

ValueInfo* Walk::info(Value* v) {
  auto it = values.find(v);
  return it == values.end() ? nullptr : &it->second;
}

const Attr* Walk::tensor_attr(Value* v) const {
  auto it = attrs.find(v);
  return it != attrs.end() && it->second.value.isTensor() ? &it->second : nullptr;
}

int64_t Walk::total(const ValueInfo& vi) {
  int64_t sum = 0;
  for (int s : vi.segments) {
    int64_t size = spaces.root(s).size;
    if (!size) return 0;
    sum += size;
  }
  return sum;
}

void Walk::block_info(const ValueInfo& vi, const std::string& why) {
  for (int s : vi.segments) spaces.block(s, why);
}

void Walk::block_value(Value* v, const std::string& why) {
  if (auto* vi = info(v)) block_info(*vi, why);
  if (auto it = lists.find(v); it != lists.end()) {
    auto list = it->second;  // block_value may grow lists
    if (list->escaped.empty()) list->escaped = why;
    for (Value* item : list->items) block_value(item, why);
  }
  if (auto it = dicts.find(v); it != dicts.end()) {
    auto dict = it->second;
    if (dict->escaped.empty()) dict->escaped = why;
    for (const auto& [key, item] : dict->items) block_value(item, why);
  }
  if (auto it = tuples.find(v); it != tuples.end())
    for (const auto& item : it->second)
      if (item) block_info(*item, why);
}

void Walk::alias(Value* to, Value* from) {
  if (auto* vi = info(from)) values[to] = *vi;
  if (auto it = lists.find(from); it != lists.end()) lists[to] = it->second;
  if (auto it = dicts.find(from); it != dicts.end()) dicts[to] = it->second;
  if (auto it = tuples.find(from); it != tuples.end()) tuples[to] = it->second;
}

void Walk::add_slices(const ValueInfo& vi, const Attr& a, int64_t dim, const std::string& role, int64_t factor) {
  int64_t offset = 0;
  for (int s : vi.segments) {
    auto& root = spaces.root(s);
    root.slices.push_back({a.module, a.name, dim, offset, factor, 0, role});
    offset += root.size;
  }
}

void Walk::unknown(Node* n, const std::string& why) {
  for (Value* v : n->inputs()) block_value(v, why);
  for (Value* v : n->outputs())
    if (carries_tensor(v->type())) values[v] = {{new_space(0, why)}};
}

// A tensor attribute read as a value (a class token, a position embedding, a layer scale): its elements a
// "parameter" slice of the group it joins. Beside a channels-first value of known rank (ConvNeXt's
// `layer_scale * x`, a [C, 1, 1] parameter) its channels are the dimension that broadcasting aligns with
// dimension 1; otherwise they are its last dimension.
ValueInfo* Walk::parameter_value(Value* v, const ValueInfo* beside) {
  const Attr* a = tensor_attr(v);
  if (!a || a->value.toTensor().dim() < 1) return nullptr;
  const auto t = a->value.toTensor();
  if (beside && beside->layout == Layout::channels_first) {
    const int64_t d = 1 - (beside->rank - t.dim());  // t's dimension under the value's dimension 1
    if (!beside->rank || t.dim() > beside->rank || d < 0 || d >= t.dim()) return nullptr;
    ValueInfo p{{new_space(t.size(d))}, Layout::channels_first, beside->rank};
    add_slices(p, *a, d, "parameter");
    return &(values[v] = p);
  }
  ValueInfo p{{new_space(t.size(-1))}, Layout::channels_last, t.dim()};
  add_slices(p, *a, t.dim() - 1, "parameter");
  return &(values[v] = p);
}

bool Walk::scalar_attribute(Value* v) const {
  const Attr* a = tensor_attr(v);
  return a && a->value.toTensor().numel() == 1;
}

bool Walk::unite_alike(const ValueInfo& a, const ValueInfo& b, const std::string& kind) {
  bool same_shape = a.layout == b.layout && a.segments.size() == b.segments.size();
  for (size_t i = 0; same_shape && i < a.segments.size(); ++i)
    same_shape = spaces.root(a.segments[i]).size == spaces.root(b.segments[i]).size;
  if (!same_shape) return false;
  for (size_t i = 0; i < a.segments.size(); ++i) spaces.unite(a.segments[i], b.segments[i], kind);
  return true;
}

int64_t Walk::channel_dim(const ValueInfo& x) {
  if (x.layout == Layout::channels_first) return 1;
  return x.rank ? x.rank - 1 : -1;
}

std::optional<bool> Walk::is_channel_dim(const ValueInfo& x, int64_t d) {
  if (x.layout == Layout::flat) return std::nullopt;
  if (d < 0 && x.rank) d += x.rank;
  const int64_t c = channel_dim(x);
  if ((d < 0) != (c < 0)) return std::nullopt;  // one counted from the end, the rank unknown
  return d == c;
}

}  // namespace lite::prune::detail

// Rules for the normalizations that follow the channels: batch_norm over dimension 1 (its weight, bias and
// running statistics become norm slices; the weight the one bn-scale ranks) and layer_norm over the last
// dimension of a channels-last value (weight and bias follow; surgery rewrites its normalized_shape).
#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

void batch_norm_rule(Walk& w, Node* n, const std::string& kind) {
  ValueInfo* x = w.info(n->input(0));
  if (!x) return w.unknown(n, kind);
  if (x->layout != Layout::channels_first) return w.unknown(n, kind + " over a non-channel dimension");
  for (size_t i = 1; i <= 4; ++i) {
    Value* in = n->input(i);
    if (in->type()->kind() == c10::TypeKind::NoneType) continue;
    const Attr* t = w.tensor_attr(in);
    if (!t) return w.unknown(n, kind + " with computed statistics");
    w.add_slices(*x, *t, 0, i == 1 ? "norm_scale" : "norm");
  }
  w.values[n->output()] = *x;
}

// Over the last dimension of a channels-last value: its weight and bias follow the channels, and its
// normalized_shape (a class constant) is rewritten by surgery to read the weight's size.
void layer_norm_rule(Walk& w, Node* n, const std::string& kind) {
  ValueInfo* x = w.info(n->input(0));
  if (!x) return;
  auto shape = torch::jit::toIValue(n->input(1));
  const Attr* weight = w.tensor_attr(n->input(2));
  const Attr* b = w.tensor_attr(n->input(3));
  const bool last_dim = x->layout == Layout::channels_last && shape && shape->isIntList() &&
                        shape->toIntVector().size() == 1 && shape->toIntVector()[0] == w.total(*x);
  if (!last_dim) return w.unknown(n, kind + " over more than the channel dimension");
  if (!weight) return w.unknown(n, kind + " without an affine weight");
  w.add_slices(*x, *weight, 0, "norm");
  if (b) w.add_slices(*x, *b, 0, "norm");
  for (int s : x->segments) w.spaces.root(s).layer_norms.push_back(weight->module);
  w.values[n->output()] = *x;
}

}  // namespace lite::prune::detail

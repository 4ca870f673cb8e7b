// Rules for element-wise ops: activations, dropout and copies pass a value's channels through; pooling and
// up-sampling too, over a channels-first value only; add/sub/mul/div of two tracked tensors unite their
// spaces (residuals, squeeze-excitation), and a tensor attribute beside a value (a position embedding, a layer
// scale) joins its space as a parameter slice.
#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

namespace {

void pass_through(Walk& w, Node* n, bool spatial, const std::string& kind) {
  ValueInfo* x = w.info(n->input(0));
  if (!x) return;
  if (spatial && x->layout != Layout::channels_first) return w.unknown(n, kind + " over a non-spatial layout");
  w.values[n->output()] = *x;
}

}  // namespace

void elementwise_rule(Walk& w, Node* n, const std::string& kind) { pass_through(w, n, false, kind); }

void spatial_rule(Walk& w, Node* n, const std::string& kind) { pass_through(w, n, true, kind); }

void binary_rule(Walk& w, Node* n, const std::string& kind) {
  ValueInfo* a = w.info(n->input(0));
  ValueInfo* b = w.info(n->input(1));
  if (!a && !b) return;
  // x + self.pos_embedding, self.layer_scale * x: a tensor attribute that broadcasts along the value's channels.
  if (a && !b && w.scalar_attribute(n->input(1))) return void(w.values[n->output()] = *a);
  if (b && !a && w.scalar_attribute(n->input(0))) return void(w.values[n->output()] = *b);
  if (a && !b && a->layout != Layout::flat && w.tensor_attr(n->input(1))) b = w.parameter_value(n->input(1), a);
  if (b && !a && b->layout != Layout::flat && w.tensor_attr(n->input(0))) a = w.parameter_value(n->input(0), b);
  const bool b_tensor = carries_tensor(n->input(1)->type());
  if (!a || (!b && b_tensor)) return w.unknown(n, kind + " with a tensor lite cannot trace");
  if (b && !w.unite_alike(*a, *b, kind)) return w.unknown(n, kind + " of tensors with different channel layouts");
  w.values[n->output()] = *a;
}

}  // namespace lite::prune::detail

// Rules for the normalizations that follow the channels: batch_norm over dimension 1 (its weight, bias and
// running statistics become norm slices; the weight the one bn-scale ranks) and layer_norm over the last
// dimension of a channels-last value (weight and bias follow; surgery rewrites its normalized_shape), and
// torchvision's FrozenBatchNorm2d as one call (its four buffers follow the channels, as batch_norm's tensors do).
#include <vector>

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

// torchvision's FrozenBatchNorm2d (detection backbones), left a call by graph_prep.cpp: its forward reshapes the
// buffers weight, bias, running_mean and running_var, each [C], to [1, C, 1, 1] and returns
// `x * (weight * (running_var + eps).rsqrt()) + (bias - running_mean * scale)`: a per-channel affine map of x's
// dimension 1 whose four buffers follow the channels (cut with them, as batch_norm's; the weight the one
// bn-scale ranks). Scripted and traced alike (a trace keeps the call and the buffers).
void frozen_batch_norm_rule(Walk& w, Node* n, const std::string& /*kind*/) {
  const std::string why = "torchvision's FrozenBatchNorm2d";
  auto self = w.attrs.find(n->input(0));
  ValueInfo* x = n->inputs().size() == 2 ? w.info(n->input(1)) : nullptr;
  if (self == w.attrs.end() || n->s(c10::attr::name) != "forward" || !x) return w.unknown(n, why + " lite cannot follow");
  const std::string path = self->second.module.empty() ? self->second.name : self->second.module + "." + self->second.name;
  if (x->layout != Layout::channels_first) return w.unknown(n, why + " over a non-channel dimension (" + path + ")");
  torch::jit::Module norm = submodule_at(w.module, path);
  std::vector<Attr> buffers;
  for (const char* name : {"weight", "bias", "running_mean", "running_var"}) {
    if (!norm.hasattr(name) || !norm.attr(name).isTensor() || norm.attr(name).toTensor().dim() != 1)
      return w.unknown(n, why + " without a 1-d " + name + " buffer (" + path + ")");
    buffers.push_back({path, name, norm.attr(name)});
  }
  for (const Attr& b : buffers) w.add_slices(*x, b, 0, b.name == "weight" ? "norm_scale" : "norm");
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

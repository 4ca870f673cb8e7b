// nn.MultiheadAttention and Swin's ShiftedWindowAttention as one rule each (graph_prep.cpp leaves their calls
// uninlined), and the items of the (output, weights) tuple nn.MultiheadAttention returns. The other call
// graph_prep.cpp leaves, FrozenBatchNorm2d's, goes to its rule in rules_norms.cpp; any other call is unknown.
#include <numeric>

#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

namespace {

// The slices, counts and multiple a packed-projection attention module adds to the space of its input.
void attention_slices(Walk& w, const torch::jit::Module& mha, const std::string& path, Space& root, int64_t embed) {
  const std::string out = path.empty() ? "out_proj" : path + ".out_proj";
  root.slices.push_back({path, "in_proj_weight", 1, 0, 1, 0, "consumer"});
  for (int64_t k = 0; k < 3; ++k) {
    root.slices.push_back({path, "in_proj_weight", 0, k * embed, 1, 0, "producer"});
    if (mha.attr("in_proj_bias").isTensor()) root.slices.push_back({path, "in_proj_bias", 0, k * embed, 1, 0, "producer"});
  }
  root.slices.push_back({out, "weight", 0, 0, 1, 0, "producer"});
  root.slices.push_back({out, "weight", 1, 0, 1, 0, "consumer"});
  if (submodule_at(w.module, out).attr("bias").isTensor()) root.slices.push_back({out, "bias", 0, 0, 1, 0, "producer"});
  const int64_t heads = mha.attr("num_heads").toInt();
  for (const char* name : {"embed_dim", "kdim", "vdim"}) root.counts.push_back({path, name, 1});
  root.counts.push_back({path, "head_dim", heads});
  root.multiple_of = std::lcm(root.multiple_of, heads);
  w.weights.push_back({path, "in_proj_weight"});  // unstructured pruning zeroes attention's matmuls too
  w.weights.push_back({out, "weight"});
}

// nn.MultiheadAttention as a whole, self-attention over channels-last values (what Torch-Pruning's
// MultiheadAttentionPruner does): its embed_dim is both the width it reads and writes and the width of
// q, k and v, so one set of channel indices goes from the input columns of in_proj, from each of q's,
// k's and v's rows, and from out_proj's rows and columns. embed_dim, head_dim, kdim and vdim follow, and
// the width is cut as num_heads blocks that lose the same local indices (as Swin's below): every head keeps
// its place and the same channels of its own, narrower by the same count, and no channel moves to another head.
void attention(Walk& w, Node* n) {
  const std::string why = "nn.MultiheadAttention";
  auto self = w.attrs.find(n->input(0));
  ValueInfo* q = w.info(n->input(1));
  if (self == w.attrs.end() || !q) return w.unknown(n, why + " lite cannot follow");
  const std::string path =
      self->second.module.empty() ? self->second.name : self->second.module + "." + self->second.name;
  torch::jit::Module mha = submodule_at(w.module, path);
  const bool packed = mha.hasattr("in_proj_weight") && mha.attr("in_proj_weight").isTensor();
  const bool plain = !mha.hasattr("bias_k") || mha.attr("bias_k").isNone();
  if (!packed || !plain) return w.unknown(n, why + " with separate q/k/v weights or bias_k/bias_v (" + path + ")");
  if (!mha.hasattr("num_heads") || !mha.hasattr("embed_dim"))  // a trace keeps only tensors: sizes are constants
    return w.unknown(n, why + " traced (its head sizes are constants of the trace; script it to prune its width)");
  // A traced call passes only the tensors it received, once each: (self, x) for self-attention.
  for (size_t i = 2; i <= 3 && i < n->inputs().size(); ++i) {
    ValueInfo* other = w.info(n->input(i));
    if (!other || !w.unite_alike(*q, *other, why)) return w.unknown(n, why + " over different query/key/value tensors");
  }
  for (size_t i = 4; i < n->inputs().size(); ++i) w.block_value(n->input(i), why + " mask");
  const int64_t embed = mha.attr("in_proj_weight").toTensor().size(1);
  if (q->layout != Layout::channels_last || q->segments.size() != 1 || w.total(*q) != embed)
    return w.unknown(n, why + " over a tensor whose channels are not its last dimension");
  Space& root = w.spaces.root(q->segments[0]);
  const int64_t heads = mha.attr("num_heads").toInt();
  if (root.blocks > 1 && root.blocks != heads)
    return w.unknown(n, why + " over channels split into " + std::to_string(root.blocks) + " blocks elsewhere");
  attention_slices(w, mha, path, root, embed);
  root.blocks = heads;  // every head loses the same local indices: no channel moves to another head
  w.tuples[n->output()] = {*q, std::nullopt};
}

// Swin's ShiftedWindowAttention (torchvision) as a whole, over a channels-last [B, H, W, C] value. Its
// forward reads C from the input's shape and splits qkv's 3C rows into (3, num_heads, C // num_heads), so
// the heads' total width *is* the residual width, as in nn.MultiheadAttention: one set of channel indices
// goes from qkv's columns, from each of q's, k's and v's rows, and from proj's rows and columns. The width
// is cut as `num_heads` blocks that lose the same local indices (the blocks of a grouped convolution), so
// every head keeps the same channels of its own and none moves to another head (Torch-Pruning's head-dim
// pruning). num_heads, the relative-position bias table [(2W-1)^2, num_heads] and the window stay as they
// are: the heads are the same heads, each narrower. The head count is read from the bias table, which a
// trace keeps too (a traced forward reads C from the input's shape as well).
void window_attention(Walk& w, Node* n, const std::string& path) {
  const std::string why = "Swin's ShiftedWindowAttention";
  torch::jit::Module attn = submodule_at(w.module, path);
  ValueInfo* x = w.info(n->input(1));
  const bool parts = attn.hasattr("qkv") && attn.hasattr("proj") && attn.hasattr("relative_position_bias_table") &&
                     attn.attr("relative_position_bias_table").isTensor();
  if (!x || n->inputs().size() != 2 || !parts) return w.unknown(n, why + " lite cannot follow (" + path + ")");
  const std::string qkv = path + ".qkv", proj = path + ".proj";
  const torch::Tensor qkv_w = tensor_at(w.module, qkv, "weight"), proj_w = tensor_at(w.module, proj, "weight");
  const int64_t width = qkv_w.size(1), heads = attn.attr("relative_position_bias_table").toTensor().size(1);
  const bool shapes = qkv_w.size(0) == 3 * width && proj_w.size(0) == width && proj_w.size(1) == width &&
                      heads > 0 && width % heads == 0;
  if (!shapes) return w.unknown(n, why + " with other widths than qkv [3C, C] and proj [C, C] (" + path + ")");
  if (x->layout != Layout::channels_last || x->segments.size() != 1 || w.total(*x) != width)
    return w.unknown(n, why + " over a tensor whose channels are not its last dimension");
  Space& root = w.spaces.root(x->segments[0]);
  const bool qkv_bias = submodule_at(w.module, qkv).attr("bias").isTensor();
  root.slices.push_back({qkv, "weight", 1, 0, 1, 0, "consumer"});
  for (int64_t k = 0; k < 3; ++k) {
    root.slices.push_back({qkv, "weight", 0, k * width, 1, 0, "producer"});
    if (qkv_bias) root.slices.push_back({qkv, "bias", 0, k * width, 1, 0, "producer"});
  }
  root.slices.push_back({proj, "weight", 0, 0, 1, 0, "producer"});
  root.slices.push_back({proj, "weight", 1, 0, 1, 0, "consumer"});
  if (submodule_at(w.module, proj).attr("bias").isTensor()) root.slices.push_back({proj, "bias", 0, 0, 1, 0, "producer"});
  if (root.blocks > 1 && root.blocks != heads)
    return w.unknown(n, why + " over channels split into " + std::to_string(root.blocks) + " blocks elsewhere");
  root.blocks = heads;  // every head loses the same local indices: no channel moves to another head
  w.weights.push_back({qkv, "weight"});  // unstructured pruning zeroes them too: the walk never sees their linears
  w.weights.push_back({proj, "weight"});
  w.values[n->output()] = *x;
}

}  // namespace

void call_rule(Walk& w, Node* n, const std::string& kind) {
  if (is_window_attention_type(n->input(0)->type())) {
    auto self = w.attrs.find(n->input(0));
    if (self == w.attrs.end()) return w.unknown(n, "Swin's ShiftedWindowAttention lite cannot follow");
    const Attr& a = self->second;
    return window_attention(w, n, a.module.empty() ? a.name : a.module + "." + a.name);
  }
  if (is_attention_type(n->input(0)->type())) return attention(w, n);
  if (is_frozen_batch_norm_type(n->input(0)->type())) return frozen_batch_norm_rule(w, n, kind);
  w.unknown(n, kind + " lite did not inline");
}

// Attention's output carries its input's channels; its weights carry none lite follows.
void tuple_item_rule(Walk& w, Node* n, const std::string& kind) {
  auto it = w.tuples.find(n->input(0));
  if (it == w.tuples.end()) return w.unknown(n, kind);
  const auto items = it->second;
  if (kind == "prim::TupleIndex") {
    auto index = torch::jit::toIValue(n->input(1));
    if (!index || !index->isInt() || size_t(index->toInt()) >= items.size()) return w.unknown(n, kind);
    if (items[size_t(index->toInt())]) w.values[n->output()] = *items[size_t(index->toInt())];
    return;
  }
  for (size_t i = 0; i < n->outputs().size() && i < items.size(); ++i)
    if (items[i]) w.values[n->output(i)] = *items[i];
}

}  // namespace lite::prune::detail

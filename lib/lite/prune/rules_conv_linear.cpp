// Rules for the layers whose weights open a channel space: convolution (plain, depthwise, grouped), transposed
// convolution, linear and embedding. Their outputs' channels are the weight's rows (a transposed conv's: its
// columns; an embedding's: its columns) plus the bias; their inputs' channels are consumer slices of the weight
// (times the spatial size after a flatten, for linear).
#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

// Types whose every instance is a depthwise conv (weight [C, 1, ...]): rewriting their `groups` to
// follow the weight is valid for all of them.
DepthwiseTypes index_depthwise_types(const torch::jit::Module& module) {
  DepthwiseTypes types;
  for (const auto& item : module.named_modules()) {
    if (!item.value.hasattr("weight") || !item.value.attr("weight").isTensor()) continue;
    auto w = item.value.attr("weight").toTensor();
    bool dw = w.dim() >= 3 && w.size(1) == 1;
    auto type = item.value.type().get();
    auto it = types.depthwise.find(type);
    types.depthwise[type] = (it == types.depthwise.end() ? true : it->second) && dw;
    types.sizes[type].insert(w.size(0));
  }
  return types;
}

namespace {

// A grouped convolution (regnet's, resnext's): output channel o reads input block o / (out / g) through the
// weight's columns, which every block shares. Its input and output channels become g equal blocks that
// lose the same local indices (the columns stay one set; `groups` stays g).
void grouped_conv(Walk& w, Node* n, const std::string& kind, const Attr& weight_attr, const Attr* b, int64_t g) {
  ValueInfo* x = w.info(n->input(0));
  const torch::Tensor weight = weight_attr.value.toTensor();
  const int64_t out = weight.size(0), block = weight.size(1);
  const std::string where = kind + " with groups=" + std::to_string(g) + " (" + weight_attr.module + ")";
  if (!x || x->layout != Layout::channels_first || x->segments.size() != 1 || w.total(*x) != block * g || out % g)
    return w.unknown(n, where + " over channels lite cannot split into its groups");
  auto& root = w.spaces.root(x->segments[0]);
  if (root.blocks > 1 && root.blocks != g)
    return w.unknown(n, where + " after one with " + std::to_string(root.blocks));
  root.blocks = g;
  root.slices.push_back({weight_attr.module, weight_attr.name, 1, 0, 1, block, "consumer"});
  ValueInfo y{{w.new_space(out)}, Layout::channels_first, x->rank};
  w.spaces.root(y.segments[0]).blocks = g;
  w.add_slices(y, weight_attr, 0, "producer");
  if (b) w.add_slices(y, *b, 0, "producer");
  w.values[n->output()] = y;
}

// groups == 1: the input's channels are the weight's columns, the output's its rows.
void plain_conv(Walk& w, Node* n, const std::string& kind, const Attr& weight_attr, const Attr* b) {
  ValueInfo* x = w.info(n->input(0));
  if (x && x->layout != Layout::channels_first)
    w.block_info(*x, kind + " over a tensor whose channels are not in dimension 1");
  else if (x)
    w.add_slices(*x, weight_attr, 1, "consumer");
  ValueInfo y{{w.new_space(weight_attr.value.toTensor().size(0))}, Layout::channels_first, x ? x->rank : 0};
  w.add_slices(y, weight_attr, 0, "producer");
  if (b) w.add_slices(y, *b, 0, "producer");
  w.values[n->output()] = y;
}

}  // namespace

void conv_rule(Walk& w, Node* n, const std::string& kind) {
  const Attr* wa = w.tensor_attr(n->input(1));
  auto groups = torch::jit::toIValue(n->input(6));
  if (!wa || !groups || !groups->isInt()) return w.unknown(n, kind + " with a computed weight or groups");
  const Attr* b = w.tensor_attr(n->input(2));
  torch::Tensor weight = wa->value.toTensor();
  int64_t g = groups->toInt(), out = weight.size(0);
  w.weights.push_back({wa->module, wa->name});
  if (g == 1) return plain_conv(w, n, kind, *wa, b);
  ValueInfo* x = w.info(n->input(0));
  auto type = submodule_at(w.module, wa->module).type().get();
  bool depthwise = weight.size(1) == 1 && out == g && x && x->layout == Layout::channels_first &&
                   w.total(*x) == g && w.depthwise_types.depthwise[type] &&
                   w.depthwise_types.sizes[type] == std::set<int64_t>{g};
  if (!depthwise && weight.size(1) > 1) return grouped_conv(w, n, kind, *wa, b, g);
  if (!depthwise)
    return w.unknown(n, kind + " with groups=" + std::to_string(g) + " (" + wa->module + ")" +
                            (weight.size(1) == 1 && out == g ? ", its type shared with other convolutions" : ""));
  w.add_slices(*x, *wa, 0, "depthwise");
  if (b) w.add_slices(*x, *b, 0, "depthwise");
  for (int s : x->segments) w.spaces.root(s).depthwise.push_back(wa->module);
  w.values[n->output()] = *x;
}

// A transposed convolution (a U-Net's up-sampling): its weight is [in, out / groups, k...], so its input
// channels are the weight's rows and its output channels the columns, the other way round from a convolution's.
void conv_transpose_rule(Walk& w, Node* n, const std::string& kind) {
  const Attr* wa = w.tensor_attr(n->input(1));
  auto groups = n->inputs().size() > 6 ? torch::jit::toIValue(n->input(6)) : c10::nullopt;
  if (!wa || !groups || !groups->isInt()) return w.unknown(n, kind + " with a computed weight or groups");
  if (groups->toInt() != 1)
    return w.unknown(n, kind + " with groups=" + std::to_string(groups->toInt()) + " (" + wa->module + ")");
  const Attr* b = w.tensor_attr(n->input(2));
  w.weights.push_back({wa->module, wa->name});
  ValueInfo* x = w.info(n->input(0));
  if (x && x->layout != Layout::channels_first)
    w.block_info(*x, kind + " over a tensor whose channels are not in dimension 1");
  else if (x)
    w.add_slices(*x, *wa, 0, "consumer");
  ValueInfo y{{w.new_space(wa->value.toTensor().size(1))}, Layout::channels_first, x ? x->rank : 0};
  w.add_slices(y, *wa, 1, "producer");
  if (b) w.add_slices(y, *b, 0, "producer");
  w.values[n->output()] = y;
}

void linear_rule(Walk& w, Node* n, const std::string& kind) {
  const Attr* wa = w.tensor_attr(n->input(1));
  if (!wa) return w.unknown(n, kind + " with a computed weight");
  const Attr* b = w.tensor_attr(n->input(2));
  torch::Tensor weight = wa->value.toTensor();
  w.weights.push_back({wa->module, wa->name});
  ValueInfo* x = w.info(n->input(0));
  if (x) {
    const int64_t channels = w.total(*x);
    if (x->layout == Layout::channels_first) {
      w.block_info(*x, kind + " over a tensor whose channels are in dimension 1 (" + wa->module + ")");
    } else if (x->layout == Layout::flat && (!channels || weight.size(1) % channels)) {
      w.block_info(*x, "flatten into " + wa->module + ": " + std::to_string(weight.size(1)) +
                           " inputs are not a multiple of " + std::to_string(channels) + " channels");
    } else {
      w.add_slices(*x, *wa, 1, "consumer", x->layout == Layout::flat ? weight.size(1) / channels : 1);
    }
  }
  const int64_t rank = x ? (x->layout == Layout::flat ? 2 : x->rank) : 0;
  ValueInfo y{{w.new_space(weight.size(0))}, Layout::channels_last, rank};
  w.add_slices(y, *wa, 0, "producer");
  if (b) w.add_slices(y, *b, 0, "producer");
  w.values[n->output()] = y;
}

// embedding(weight, indices): each index reads a row; the channels are the weight's columns.
void embedding_rule(Walk& w, Node* n, const std::string& kind) {
  const Attr* wa = w.tensor_attr(n->input(0));
  if (!wa) return w.unknown(n, kind + " with a computed weight");
  ValueInfo* indices = w.info(n->input(1));
  ValueInfo y{{w.new_space(wa->value.toTensor().size(1))}, Layout::channels_last,
              indices && indices->rank ? indices->rank + 1 : 0};
  w.add_slices(y, *wa, 1, "producer");
  w.values[n->output()] = y;
}

}  // namespace lite::prune::detail

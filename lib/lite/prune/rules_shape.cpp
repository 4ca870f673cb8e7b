// Rules for the ops that move or merge dimensions: they keep track of where the channels are (dimension 1,
// the last, or flattened from dimension 1) and leave the op unknown (blocking its channels) when the channels
// would be split, merged with another dimension or buried:
//   - flatten(1, -1), view/reshape(n, -1): flat, each channel spread over the spatial positions;
//   - reshape(n, C, h * w) with C an int attribute equal to the channel count (ViT's hidden_dim): a count
//     surgery updates;
//   - permute that lands the channels first after the batch or last; expand(n, -1, -1) of a channels-last
//     value (ViT's class token); select/slice of another dimension (or a slice of every channel);
//     mean/sum/amax over other dimensions;
//   - pad (Swin's windows and patch merging) that leaves the channel dimension unpadded.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune::detail {

namespace {

void flatten_like(Walk& w, Node* n, const std::string& kind, bool from_dim1) {
  ValueInfo* x = w.info(n->input(0));
  if (!x) return;
  if (!from_dim1 || x->layout == Layout::channels_last) return w.unknown(n, kind + " to another layout");
  w.values[n->output()] = {x->segments, Layout::flat, 2};
}

void merge_spatial(Walk& w, Node* n, const std::string& kind, Value* channel_entry) {
  ValueInfo* x = w.info(n->input(0));
  if (!x) return;
  auto count = w.folded_ints.find(channel_entry);
  if (x->layout != Layout::channels_first || count == w.folded_ints.end() || x->segments.size() != 1)
    return w.unknown(n, kind + " to another layout");
  auto c = torch::jit::toIValue(channel_entry);
  auto& root = w.spaces.root(x->segments[0]);
  if (!c || c->toInt() != root.size) return w.unknown(n, kind + " to another layout");
  root.counts.push_back(count->second);
  w.values[n->output()] = {x->segments, Layout::channels_first, 3};
}

}  // namespace

void flatten_rule(Walk& w, Node* n, const std::string& kind) {
  auto start = torch::jit::toIValue(n->input(1)), end = torch::jit::toIValue(n->input(2));
  flatten_like(w, n, kind,
               start && end && start->isInt() && end->isInt() && start->toInt() == 1 && end->toInt() == -1);
}

// x.view(x.size(0), -1) / x.reshape(n, -1): a flatten from dimension 1. x.reshape(n, C, h * w) with C the
// channel count read from an int attribute (ViT's hidden_dim): the spatial dimensions merged, the
// attribute a count surgery updates.
void reshape_rule(Walk& w, Node* n, const std::string& kind) {
  Node* shape = n->input(1)->node();
  const bool listed = shape->kind() == c10::prim::ListConstruct;
  if (listed && shape->inputs().size() == 3) return merge_spatial(w, n, kind, shape->input(1));
  auto last = listed && shape->inputs().size() == 2 ? torch::jit::toIValue(shape->input(1)) : c10::nullopt;
  flatten_like(w, n, kind, last && last->isInt() && last->toInt() == -1);
}

// x.permute(0, 2, 1): the channel dimension moves; it must land first after the batch or last.
void permute_rule(Walk& w, Node* n, const std::string& kind) {
  ValueInfo* x = w.info(n->input(0));
  if (!x) return;
  auto order = torch::jit::toIValue(n->input(1));
  if (!order || !order->isIntList() || x->layout == Layout::flat) return w.unknown(n, kind + " to another layout");
  const auto dims = order->toIntVector();
  const int64_t rank = int64_t(dims.size()), from = x->layout == Layout::channels_first ? 1 : rank - 1;
  const auto at = std::find(dims.begin(), dims.end(), from) - dims.begin();
  if (at == 1 && rank > 2) return void(w.values[n->output()] = {x->segments, Layout::channels_first, rank});
  if (at == rank - 1) return void(w.values[n->output()] = {x->segments, Layout::channels_last, rank});
  w.unknown(n, kind + " to another layout");
}

// x.expand(n, -1, -1) keeps the last dimension; a tensor attribute expanded (ViT's class token) becomes a
// tracked value whose channels are its last dimension.
void expand_rule(Walk& w, Node* n, const std::string& kind) {
  Node* sizes = n->input(1)->node();  // [n, -1, -1]: a list with a computed batch
  auto last = sizes->kind() == c10::prim::ListConstruct && sizes->inputs().size() > 0
                  ? torch::jit::toIValue(sizes->inputs().back())
                  : c10::nullopt;
  ValueInfo* x = w.info(n->input(0));
  if (!x) x = w.parameter_value(n->input(0));
  if (!x) return;
  if (!last || !last->isInt() || last->toInt() != -1 || x->layout != Layout::channels_last)
    return w.unknown(n, kind + " of the channel dimension");
  w.values[n->output()] = {x->segments, Layout::channels_last, int64_t(sizes->inputs().size())};
}

namespace {

// x[..., :] (Swin's patch merging): a slice of every channel, in order. start None or 0, end None or the
// largest int (what a trace records), step 1.
bool whole_slice(Node* n) {
  if (n->kind() != c10::aten::slice || n->inputs().size() != 5) return false;
  auto start = torch::jit::toIValue(n->input(2)), end = torch::jit::toIValue(n->input(3));
  auto step = torch::jit::toIValue(n->input(4));
  const bool from_first = start && (start->isNone() || (start->isInt() && start->toInt() == 0));
  const bool to_last = end && (end->isNone() || (end->isInt() && end->toInt() == INT64_MAX));
  return from_first && to_last && step && step->isInt() && step->toInt() == 1;
}

}  // namespace

// x[:, 0] and x[:, 1:]: indexing a dimension other than the channels'; x[..., :] keeps every channel.
void index_other_dim_rule(Walk& w, Node* n, const std::string& kind) {
  ValueInfo* x = w.info(n->input(0));
  if (!x) return;
  auto dim = torch::jit::toIValue(n->input(1));
  auto channel = dim && dim->isInt() ? Walk::is_channel_dim(*x, dim->toInt()) : std::nullopt;
  if (channel && *channel && whole_slice(n)) return void(w.values[n->output()] = *x);
  if (!channel || *channel) return w.unknown(n, kind + " of the channel dimension");
  const bool drops = kind == "aten::select";
  if (drops && x->layout == Layout::channels_first && dim->toInt() == 0) return w.unknown(n, kind + " of the batch");
  w.values[n->output()] = {x->segments, x->layout, x->rank ? x->rank - (drops ? 1 : 0) : 0};
}

// mean/sum/amax over dimensions other than the channels' (a global pooling written as a mean).
void reduce_rule(Walk& w, Node* n, const std::string& kind) {
  ValueInfo* x = w.info(n->input(0));
  if (!x) return;
  auto dims = torch::jit::toIValue(n->input(1));
  auto keep = n->inputs().size() > 2 ? torch::jit::toIValue(n->input(2)) : c10::nullopt;
  bool other = x->layout != Layout::flat && dims && dims->isIntList() && keep && keep->isBool();
  for (int64_t d : other ? dims->toIntVector() : std::vector<int64_t>{}) {
    auto channel = Walk::is_channel_dim(*x, d);
    other = other && channel && !*channel && (x->layout == Layout::channels_last || d >= 2);
  }
  if (!other) return w.unknown(n, kind + " over the channel dimension");
  const bool keep_dims = keep->toBool();
  const int64_t rank = x->rank ? (keep_dims ? x->rank : x->rank - int64_t(dims->toIntVector().size())) : 0;
  if (x->layout == Layout::channels_last)
    return void(w.values[n->output()] = {x->segments, Layout::channels_last, rank});
  w.values[n->output()] = {x->segments, keep_dims ? Layout::channels_first : Layout::flat, keep_dims ? rank : 2};
}

// F.pad(x, [left, right, top, bottom, ...]): pairs from the last dimension backwards. The channels pass
// when their pair is two constant zeros (Swin pads [0, 0, 0, pad_r, 0, pad_b] channels-last) or is not
// reached (a channels-first pad of the spatial dimensions alone).
void pad_rule(Walk& w, Node* n, const std::string& kind) {
  ValueInfo* x = w.info(n->input(0));
  if (!x) return;
  std::vector<std::optional<int64_t>> pads;  // nullopt: computed
  if (n->input(1)->node()->kind() == c10::prim::ListConstruct) {
    for (Value* v : n->input(1)->node()->inputs()) {
      auto c = torch::jit::toIValue(v);
      pads.push_back(c && c->isInt() ? std::optional<int64_t>(c->toInt()) : std::nullopt);
    }
  } else if (auto constant = torch::jit::toIValue(n->input(1)); constant && constant->isIntList()) {
    for (int64_t p : constant->toIntVector()) pads.push_back(p);
  } else {
    return w.unknown(n, kind + " of sizes lite cannot read");
  }
  int64_t pair = -1;  // the channel dimension's pair, counted from the last dimension
  if (x->layout == Layout::channels_last) pair = 0;
  if (x->layout == Layout::channels_first && x->rank > 1) pair = x->rank - 2;
  if (pair < 0) return w.unknown(n, kind + " of a tensor whose channel dimension lite cannot place");
  for (size_t i = size_t(2 * pair); i < size_t(2 * pair + 2) && i < pads.size(); ++i)
    if (pads[i] != int64_t(0)) return w.unknown(n, kind + " of the channel dimension");
  w.values[n->output()] = *x;
}

}  // namespace lite::prune::detail

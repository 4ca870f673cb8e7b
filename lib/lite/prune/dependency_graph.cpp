// Channel dependency groups over a TorchScript graph, the way Torch-Pruning's DepGraph builds them over
// Python modules, but read from the file itself so any scripted model works without its source.
//
// Algorithm: copy forward's graph, inline every submodule call but attention's, replace bool/int/float
// attribute reads (training, use_res_connect) by their values and fold constants, and decide the `if`s that
// depend on the input by running it once (graph_prep.cpp), so only the branches that run remain. Then walk
// the nodes once, in order, tracking for each tensor value the "channel spaces" along its channel dimension
// (dim 1, or the last for linear outputs; several after a concatenation) in a union-find:
//   - conv/linear outputs open a new space (weight rows + bias); their inputs add consumer slices
//     (weight columns; times the spatial size after a flatten);
//   - batchnorm, activations, pooling, dropout pass the space through (batchnorm adds its four tensors);
//   - depthwise convolution passes it through and marks `groups` to follow the channel count; a grouped
//     convolution splits its input and output spaces into `groups` blocks that lose the same local indices;
//   - element-wise add/mul of two tracked tensors unites their spaces (residuals, squeeze-excitation);
//   - cat along channels concatenates the spaces, so consumers see each one at an offset; a list built
//     by ListConstruct and grown by append (densenet's dense blocks) is followed item by item, so each
//     cat reads the list as it stands at that point of the walk;
//   - an `if` with no outputs that only checks a tensor's rank or device before raising (batchnorm's
//     _check_input_dim) reads nothing pruning changes and is skipped;
//   - transformers: layer_norm over the channels passes the space through (weight and bias follow, its
//     normalized_shape is rewritten); embedding opens a space (weight columns); nn.MultiheadAttention is one
//     rule (TP's: in_proj's columns and q/k/v rows, out_proj's rows and columns, embed_dim and head_dim
//     follow, kept stays a multiple of num_heads); a tensor attribute added or concatenated to a value
//     (position embedding, class token) joins its space along its last dimension; permute, expand,
//     select and slice of other dimensions, and a reshape to [n, C, h*w] with C an int attribute
//     (ViT's hidden_dim, then updated) keep track of where the channels are.
// Anything else (a view to another shape, a permute that buries the channels, chunk, an if
// that survived, the model's inputs and outputs) blocks every space it touches, with the op as the reason:
// a group is pruned only when every op on its channels is one of the rules above.
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/peephole.h>


#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "lite/core/error.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

using torch::jit::Node;
using torch::jit::Value;

torch::jit::Module submodule_at(const torch::jit::Module& module, const std::string& path) {
  torch::jit::Module m = module;
  if (path.empty()) return m;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    m = m.attr(part).toModule();
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return m;
}

torch::Tensor tensor_at(const torch::jit::Module& module, const std::string& module_path, const std::string& attr) {
  return submodule_at(module, module_path).attr(attr).toTensor();
}

namespace {

enum class Layout { channels_first, channels_last, flat };  // dim 1; the last dim; flattened from dim 1

struct ValueInfo {
  std::vector<int> segments;  // channel spaces in order along the channel dimension
  Layout layout = Layout::channels_first;
  int64_t rank = 0;           // 0 when unknown
};

struct TensorList {
  std::vector<Value*> items;
  std::string escaped;  // why the list is blocked ("" while only cat and append read it)
};

struct Space {
  int parent;
  int64_t size;  // 0 when unknown (model inputs, outputs of unknown ops)
  std::string blocked;
  std::vector<TensorSlice> slices;
  std::vector<std::string> depthwise;
  std::vector<std::string> layer_norms;
  std::vector<CountAttribute> counts;
  int64_t multiple_of = 1;
  int64_t blocks = 1;
};

struct Attr {
  std::string module, name;
  c10::IValue value;
};

bool carries_tensor(const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::TensorType) return true;
  for (const auto& t : type->containedTypes())
    if (carries_tensor(t)) return true;
  return false;
}

const std::set<std::string>& elementwise_unary() {
  static const std::set<std::string> ops = {
      "aten::relu",        "aten::relu_",        "aten::relu6",       "aten::relu6_",     "aten::hardtanh",
      "aten::hardtanh_",   "aten::hardswish",    "aten::hardswish_",  "aten::hardsigmoid", "aten::hardsigmoid_",
      "aten::sigmoid",     "aten::sigmoid_",     "aten::silu",        "aten::silu_",      "aten::gelu",
      "aten::tanh",        "aten::tanh_",        "aten::leaky_relu",  "aten::leaky_relu_", "aten::elu",
      "aten::elu_",        "aten::mish",         "aten::dropout",     "aten::dropout_",   "aten::feature_dropout",
      "aten::alpha_dropout", "aten::contiguous", "aten::clone",       "aten::detach"};
  return ops;
}

const std::set<std::string>& spatial_ops() {
  static const std::set<std::string> ops = {
      "aten::max_pool1d",          "aten::max_pool2d",          "aten::max_pool3d",         "aten::avg_pool1d",
      "aten::avg_pool2d",          "aten::avg_pool3d",          "aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d",
      "aten::adaptive_avg_pool3d", "aten::upsample_nearest2d", "aten::upsample_bilinear2d"};
  return ops;
}

const std::set<std::string>& elementwise_binary() {
  static const std::set<std::string> ops = {"aten::add", "aten::add_", "aten::sub", "aten::sub_",
                                            "aten::mul", "aten::mul_", "aten::div", "aten::div_"};
  return ops;
}

class Analyzer {
 public:
  Analyzer(const torch::jit::Module& module, const std::vector<c10::IValue>& example)
      : module_(module), example_(example) {
    index_depthwise_types();
  }

  DependencyGraph run() {
    auto graph = module_.get_method("forward").graph()->copy();
    inline_calls_except_attention(*graph);
    fold_scalar_attributes(*graph);
    torch::jit::PeepholeOptimize(graph);  // `tensor is None` on a non-optional tensor -> false
    torch::jit::ConstantPropagation(graph);
    torch::jit::EliminateDeadCode(graph);
    decide_branches(graph, module_, example_);
    attrs_.clear();
    resolve_attributes(graph->block(), graph->inputs()[0]);
    for (size_t i = 1; i < graph->inputs().size(); ++i) {
      Value* input = graph->inputs()[i];
      if (!carries_tensor(input->type())) continue;
      const bool known = i - 1 < example_.size() && example_[i - 1].isTensor();
      info_[input] = {{new_space(0, "model input")}, Layout::channels_first, known ? example_[i - 1].toTensor().dim() : 0};
    }
    for (Node* n : graph->nodes()) visit(n);
    for (Value* v : graph->return_node()->inputs()) block_value(v, "model output");
    unite_shared_slices();
    return collect();
  }

 private:
  // ---- attributes ------------------------------------------------------------------------------

  void resolve_attributes(torch::jit::Block* block, Value* self) {
    for (Node* n : block->nodes()) {
      for (auto* b : n->blocks()) resolve_attributes(b, self);
      if (n->kind() != c10::prim::GetAttr) continue;
      Value* in = n->input(0);
      c10::IValue parent;
      std::string path;
      if (in == self) {
        parent = module_._ivalue();
      } else if (auto it = attrs_.find(in); it != attrs_.end() && it->second.value.isObject()) {
        parent = it->second.value;
        path = it->second.module.empty() ? it->second.name : it->second.module + "." + it->second.name;
      } else {
        continue;
      }
      const std::string name = n->s(c10::attr::name);
      attrs_[n->output()] = {path, name, parent.toObject()->getAttr(name)};
    }
  }

  // Scalar and int-list attributes become constants. Int attributes keep their origin (folded_ints_): a reshape
  // to one of them (ViT's hidden_dim) is a count that surgery updates.
  void fold_scalar_attributes(torch::jit::Graph& graph) {
    resolve_attributes(graph.block(), graph.inputs()[0]);
    for (auto& [value, attr] : attrs_) {
      const auto& v = attr.value;
      // int lists too: torchvision's Permute module (ConvNeXt) reads its order from one
      if (!(v.isBool() || v.isInt() || v.isDouble() || v.isIntList())) continue;
      torch::jit::WithInsertPoint guard(value->node());
      Value* constant = graph.insertConstant(v);
      value->replaceAllUsesWith(constant);
      if (v.isInt()) folded_ints_[constant] = {attr.module, attr.name, 1};
    }
  }

  const Attr* tensor_attr(Value* v) const {
    auto it = attrs_.find(v);
    return it != attrs_.end() && it->second.value.isTensor() ? &it->second : nullptr;
  }

  // Types whose every instance is a depthwise conv (weight [C, 1, ...]): rewriting their `groups` to
  // follow the weight is valid for all of them.
  void index_depthwise_types() {
    for (const auto& item : module_.named_modules()) {
      if (!item.value.hasattr("weight") || !item.value.attr("weight").isTensor()) continue;
      auto w = item.value.attr("weight").toTensor();
      bool dw = w.dim() >= 3 && w.size(1) == 1;
      auto type = item.value.type().get();
      auto it = depthwise_type_.find(type);
      depthwise_type_[type] = (it == depthwise_type_.end() ? true : it->second) && dw;
      type_sizes_[type].insert(w.size(0));
    }
  }

  // ---- union-find over channel spaces ----------------------------------------------------------

  int new_space(int64_t size, const std::string& blocked = {}) {
    spaces_.push_back({int(spaces_.size()), size, blocked, {}, {}, {}, {}, 1, 1});
    return int(spaces_.size()) - 1;
  }
  int find(int s) {
    while (spaces_[s].parent != s) s = spaces_[s].parent = spaces_[spaces_[s].parent].parent;
    return s;
  }
  void block(int s, const std::string& why) {
    auto& root = spaces_[find(s)];
    if (root.blocked.empty()) root.blocked = why;
  }
  void unite(int a, int b, const std::string& where) {
    a = find(a), b = find(b);
    if (a == b) return;
    if (a > b) std::swap(a, b);  // the older space stays the root (its producer names the group)
    auto& ra = spaces_[a];
    auto& rb = spaces_[b];
    if (ra.size && rb.size && ra.size != rb.size) {
      std::string why = where + " joins " + std::to_string(ra.size) + " and " + std::to_string(rb.size) + " channels";
      block(a, why), block(b, why);
      return;
    }
    if (ra.blocks > 1 && rb.blocks > 1 && ra.blocks != rb.blocks) {
      const std::string why = where + " joins channels of grouped convolutions with " + std::to_string(ra.blocks) +
                              " and " + std::to_string(rb.blocks) + " groups";
      block(a, why), block(b, why);
      return;
    }
    rb.parent = a;
    ra.blocks = std::max(ra.blocks, rb.blocks);
    if (!ra.size) ra.size = rb.size;
    if (ra.blocked.empty()) ra.blocked = rb.blocked;
    ra.slices.insert(ra.slices.end(), rb.slices.begin(), rb.slices.end());
    ra.depthwise.insert(ra.depthwise.end(), rb.depthwise.begin(), rb.depthwise.end());
    ra.layer_norms.insert(ra.layer_norms.end(), rb.layer_norms.begin(), rb.layer_norms.end());
    ra.counts.insert(ra.counts.end(), rb.counts.begin(), rb.counts.end());
    ra.multiple_of = std::lcm(ra.multiple_of, rb.multiple_of);
  }

  ValueInfo* info(Value* v) {
    auto it = info_.find(v);
    return it == info_.end() ? nullptr : &it->second;
  }
  int64_t total(const ValueInfo& vi) {
    int64_t sum = 0;
    for (int s : vi.segments) {
      int64_t size = spaces_[find(s)].size;
      if (!size) return 0;
      sum += size;
    }
    return sum;
  }
  void block_info(const ValueInfo& vi, const std::string& why) {
    for (int s : vi.segments) block(s, why);
  }
  void block_value(Value* v, const std::string& why) {
    if (auto* vi = info(v)) block_info(*vi, why);
    if (auto it = lists_.find(v); it != lists_.end()) {
      auto list = it->second;  // block_value may grow lists_
      if (list->escaped.empty()) list->escaped = why;
      for (Value* item : list->items) block_value(item, why);
    }
    if (auto it = tuples_.find(v); it != tuples_.end())
      for (const auto& item : it->second)
        if (item) block_info(*item, why);
  }
  void add_slices(const ValueInfo& vi, const Attr& a, int64_t dim, const std::string& role, int64_t factor = 1) {
    int64_t offset = 0;
    for (int s : vi.segments) {
      auto& root = spaces_[find(s)];
      root.slices.push_back({a.module, a.name, dim, offset, factor, 0, role});
      offset += root.size;
    }
  }

  // Every tracked tensor the node reads is blocked; its tensor outputs start blocked spaces.
  void unknown(Node* n, const std::string& why) {
    for (Value* v : n->inputs()) block_value(v, why);
    for (Value* v : n->outputs())
      if (carries_tensor(v->type())) info_[v] = {{new_space(0, why)}};
  }

  // ---- node rules --------------------------------------------------------------------------------

  void visit(Node* n) {
    const std::string kind = n->kind().toQualString();
    if (!n->blocks().empty()) return control(n, kind);
    if (kind == "prim::Constant" || kind == "prim::GetAttr") return;
    if (kind == "aten::conv1d" || kind == "aten::conv2d" || kind == "aten::conv3d") return conv(n, kind);
    if (kind == "aten::linear") return linear(n, kind);
    if (kind == "aten::conv_transpose1d" || kind == "aten::conv_transpose2d" || kind == "aten::conv_transpose3d")
      return conv_transpose(n, kind);
    if (kind == "aten::batch_norm") return batch_norm(n, kind);
    if (kind == "aten::layer_norm") return layer_norm(n, kind);
    if (kind == "aten::embedding") return embedding(n, kind);
    if (kind == "prim::CallMethod") return call(n, kind);
    if (kind == "prim::TupleUnpack" || kind == "prim::TupleIndex") return tuple_item(n, kind);
    if (kind == "aten::permute") return permute(n, kind);
    if (kind == "aten::expand") return expand(n, kind);
    if (kind == "aten::select" || kind == "aten::slice") return index_other_dim(n, kind);
    if (kind == "aten::flatten") return flatten(n, kind);
    if (kind == "aten::view" || kind == "aten::reshape") return reshape(n, kind);
    if (kind == "aten::cat") return cat(n, kind);
    if (kind == "aten::mean" || kind == "aten::sum" || kind == "aten::amax") return reduce(n, kind);
    if (kind == "prim::ListConstruct") return list(n);
    if (kind == "aten::append") return append(n, kind);
    if (elementwise_unary().count(kind)) return pass_through(n, false, kind);
    if (spatial_ops().count(kind)) return pass_through(n, true, kind);
    if (elementwise_binary().count(kind)) return binary(n, kind);
    bool outputs_tensor = false;
    for (Value* v : n->outputs()) outputs_tensor = outputs_tensor || carries_tensor(v->type());
    if (!outputs_tensor) return;  // reads shapes or scalars only (aten::size, aten::dim, raise)
    unknown(n, kind);
  }

  // An `if` without outputs whose branches only read ranks, devices or grad flags (a guard that raises).
  static bool is_metadata_guard(Node* n) {
    static const std::set<std::string> metadata = {"aten::dim", "prim::device", "prim::is_cuda",
                                                   "prim::requires_grad", "aten::len"};
    if (!n->outputs().empty()) return false;
    std::function<bool(torch::jit::Block*)> reads_metadata_only = [&](torch::jit::Block* b) {
      for (Node* inner : b->nodes()) {
        for (auto* bb : inner->blocks())
          if (!reads_metadata_only(bb)) return false;
        bool metadata_read = metadata.count(inner->kind().toQualString()) > 0;
        for (Value* v : inner->inputs())
          if (carries_tensor(v->type()) && !metadata_read) return false;
        for (Value* v : inner->outputs())
          if (carries_tensor(v->type())) return false;
      }
      return true;
    };
    for (auto* b : n->blocks())
      if (!reads_metadata_only(b)) return false;
    return true;
  }

  void control(Node* n, const std::string& kind) {
    if (kind == "prim::If" && is_metadata_guard(n)) return;
    std::function<void(torch::jit::Block*)> scan = [&](torch::jit::Block* b) {
      for (Node* inner : b->nodes()) {
        for (Value* v : inner->inputs()) block_value(v, kind + " left after folding");
        for (auto* bb : inner->blocks()) scan(bb);
      }
      for (Value* v : b->outputs()) block_value(v, kind + " left after folding");
    };
    for (auto* b : n->blocks()) scan(b);
    unknown(n, kind + " left after folding");
  }

  void conv(Node* n, const std::string& kind) {
    const Attr* w = tensor_attr(n->input(1));
    auto groups = torch::jit::toIValue(n->input(6));
    if (!w || !groups || !groups->isInt()) return unknown(n, kind + " with a computed weight or groups");
    const Attr* b = tensor_attr(n->input(2));
    torch::Tensor weight = w->value.toTensor();
    int64_t g = groups->toInt(), out = weight.size(0);
    weight_order_.push_back({w->module, w->name});
    ValueInfo* x = info(n->input(0));
    if (g == 1) {
      if (x && x->layout != Layout::channels_first)
        block_info(*x, kind + " over a tensor whose channels are not in dimension 1");
      else if (x)
        add_slices(*x, *w, 1, "consumer");
      ValueInfo y{{new_space(out)}, Layout::channels_first, x ? x->rank : 0};
      add_slices(y, *w, 0, "producer");
      if (b) add_slices(y, *b, 0, "producer");
      info_[n->output()] = y;
      return;
    }
    auto type = submodule_at(module_, w->module).type().get();
    bool depthwise = weight.size(1) == 1 && out == g && x && x->layout == Layout::channels_first &&
                     total(*x) == g && depthwise_type_[type] && type_sizes_[type] == std::set<int64_t>{g};
    if (!depthwise && weight.size(1) > 1) return grouped_conv(n, kind, *w, b, g);
    if (!depthwise)
      return unknown(n, kind + " with groups=" + std::to_string(g) + " (" + w->module + ")" +
                            (weight.size(1) == 1 && out == g ? ", its type shared with other convolutions" : ""));
    add_slices(*x, *w, 0, "depthwise");
    if (b) add_slices(*x, *b, 0, "depthwise");
    for (int s : x->segments) spaces_[find(s)].depthwise.push_back(w->module);
    info_[n->output()] = *x;
  }

  // A grouped convolution (regnet's, resnext's): output channel o reads input block o / (out / g) through the
  // weight's columns, which every block shares. Its input and output channels become g equal blocks that
  // lose the same local indices (the columns stay one set; `groups` stays g).
  void grouped_conv(Node* n, const std::string& kind, const Attr& w, const Attr* b, int64_t g) {
    ValueInfo* x = info(n->input(0));
    const torch::Tensor weight = w.value.toTensor();
    const int64_t out = weight.size(0), block = weight.size(1);
    const std::string where = kind + " with groups=" + std::to_string(g) + " (" + w.module + ")";
    if (!x || x->layout != Layout::channels_first || x->segments.size() != 1 || total(*x) != block * g || out % g)
      return unknown(n, where + " over channels lite cannot split into its groups");
    auto& root = spaces_[find(x->segments[0])];
    if (root.blocks > 1 && root.blocks != g) return unknown(n, where + " after one with " + std::to_string(root.blocks));
    root.blocks = g;
    root.slices.push_back({w.module, w.name, 1, 0, 1, block, "consumer"});
    ValueInfo y{{new_space(out)}, Layout::channels_first, x->rank};
    spaces_[y.segments[0]].blocks = g;
    add_slices(y, w, 0, "producer");
    if (b) add_slices(y, *b, 0, "producer");
    info_[n->output()] = y;
  }

  // A transposed convolution (a U-Net's up-sampling): its weight is [in, out / groups, k...], so its input
  // channels are the weight's rows and its output channels the columns, the other way round from a convolution's.
  void conv_transpose(Node* n, const std::string& kind) {
    const Attr* w = tensor_attr(n->input(1));
    auto groups = n->inputs().size() > 6 ? torch::jit::toIValue(n->input(6)) : c10::nullopt;
    if (!w || !groups || !groups->isInt()) return unknown(n, kind + " with a computed weight or groups");
    if (groups->toInt() != 1)
      return unknown(n, kind + " with groups=" + std::to_string(groups->toInt()) + " (" + w->module + ")");
    const Attr* b = tensor_attr(n->input(2));
    weight_order_.push_back({w->module, w->name});
    ValueInfo* x = info(n->input(0));
    if (x && x->layout != Layout::channels_first)
      block_info(*x, kind + " over a tensor whose channels are not in dimension 1");
    else if (x)
      add_slices(*x, *w, 0, "consumer");
    ValueInfo y{{new_space(w->value.toTensor().size(1))}, Layout::channels_first, x ? x->rank : 0};
    add_slices(y, *w, 1, "producer");
    if (b) add_slices(y, *b, 0, "producer");
    info_[n->output()] = y;
  }

  void linear(Node* n, const std::string& kind) {
    const Attr* w = tensor_attr(n->input(1));
    if (!w) return unknown(n, kind + " with a computed weight");
    const Attr* b = tensor_attr(n->input(2));
    torch::Tensor weight = w->value.toTensor();
    weight_order_.push_back({w->module, w->name});
    ValueInfo* x = info(n->input(0));
    if (x) {
      const int64_t channels = total(*x);
      if (x->layout == Layout::channels_first) {
        block_info(*x, kind + " over a tensor whose channels are in dimension 1 (" + w->module + ")");
      } else if (x->layout == Layout::flat && (!channels || weight.size(1) % channels)) {
        block_info(*x, "flatten into " + w->module + ": " + std::to_string(weight.size(1)) +
                           " inputs are not a multiple of " + std::to_string(channels) + " channels");
      } else {
        add_slices(*x, *w, 1, "consumer", x->layout == Layout::flat ? weight.size(1) / channels : 1);
      }
    }
    const int64_t rank = x ? (x->layout == Layout::flat ? 2 : x->rank) : 0;
    ValueInfo y{{new_space(weight.size(0))}, Layout::channels_last, rank};
    add_slices(y, *w, 0, "producer");
    if (b) add_slices(y, *b, 0, "producer");
    info_[n->output()] = y;
  }

  void batch_norm(Node* n, const std::string& kind) {
    ValueInfo* x = info(n->input(0));
    if (!x) return unknown(n, kind);
    if (x->layout != Layout::channels_first) return unknown(n, kind + " over a non-channel dimension");
    for (size_t i = 1; i <= 4; ++i) {
      Value* in = n->input(i);
      if (in->type()->kind() == c10::TypeKind::NoneType) continue;
      const Attr* t = tensor_attr(in);
      if (!t) return unknown(n, kind + " with computed statistics");
      add_slices(*x, *t, 0, i == 1 ? "norm_scale" : "norm");
    }
    info_[n->output()] = *x;
  }

  // Over the last dimension of a channels-last value: its weight and bias follow the channels, and its
  // normalized_shape (a class constant) is rewritten by surgery to read the weight's size.
  void layer_norm(Node* n, const std::string& kind) {
    ValueInfo* x = info(n->input(0));
    if (!x) return;
    auto shape = torch::jit::toIValue(n->input(1));
    const Attr* w = tensor_attr(n->input(2));
    const Attr* b = tensor_attr(n->input(3));
    const bool last_dim = x->layout == Layout::channels_last && shape && shape->isIntList() &&
                          shape->toIntVector().size() == 1 && shape->toIntVector()[0] == total(*x);
    if (!last_dim) return unknown(n, kind + " over more than the channel dimension");
    if (!w) return unknown(n, kind + " without an affine weight");
    add_slices(*x, *w, 0, "norm");
    if (b) add_slices(*x, *b, 0, "norm");
    for (int s : x->segments) spaces_[find(s)].layer_norms.push_back(w->module);
    info_[n->output()] = *x;
  }

  // embedding(weight, indices): each index reads a row; the channels are the weight's columns.
  void embedding(Node* n, const std::string& kind) {
    const Attr* w = tensor_attr(n->input(0));
    if (!w) return unknown(n, kind + " with a computed weight");
    ValueInfo* indices = info(n->input(1));
    ValueInfo y{{new_space(w->value.toTensor().size(1))}, Layout::channels_last, indices && indices->rank ? indices->rank + 1 : 0};
    add_slices(y, *w, 1, "producer");
    info_[n->output()] = y;
  }

  void call(Node* n, const std::string& kind) {
    if (is_attention_type(n->input(0)->type())) return attention(n);
    unknown(n, kind + " lite did not inline");
  }

  // nn.MultiheadAttention as a whole, self-attention over channels-last values (what Torch-Pruning's
  // MultiheadAttentionPruner does): its embed_dim is both the width it reads and writes and the width of
  // q, k and v, so one set of channel indices goes from the input columns of in_proj, from each of q's,
  // k's and v's rows, and from out_proj's rows and columns. embed_dim, head_dim, kdim and vdim follow, and
  // the kept count stays a multiple of num_heads (every head keeps embed_dim / num_heads).
  void attention(Node* n) {
    const std::string why = "nn.MultiheadAttention";
    auto self = attrs_.find(n->input(0));
    ValueInfo* q = info(n->input(1));
    if (self == attrs_.end() || !q) return unknown(n, why + " lite cannot follow");
    const std::string path = self->second.module.empty() ? self->second.name : self->second.module + "." + self->second.name;
    torch::jit::Module mha = submodule_at(module_, path);
    const bool packed = mha.hasattr("in_proj_weight") && mha.attr("in_proj_weight").isTensor();
    const bool plain = !mha.hasattr("bias_k") || mha.attr("bias_k").isNone();
    if (!packed || !plain) return unknown(n, why + " with separate q/k/v weights or bias_k/bias_v (" + path + ")");
    if (!mha.hasattr("num_heads") || !mha.hasattr("embed_dim"))  // a trace keeps only tensors: sizes are constants
      return unknown(n, why + " traced (its head sizes are constants of the trace; script it to prune its width)");
    // A traced call passes only the tensors it received, once each: (self, x) for self-attention.
    for (size_t i = 2; i <= 3 && i < n->inputs().size(); ++i) {
      ValueInfo* other = info(n->input(i));
      if (!other || !unite_alike(*q, *other, why)) return unknown(n, why + " over different query/key/value tensors");
    }
    for (size_t i = 4; i < n->inputs().size(); ++i) block_value(n->input(i), why + " mask");
    const int64_t embed = mha.attr("in_proj_weight").toTensor().size(1);
    if (q->layout != Layout::channels_last || q->segments.size() != 1 || total(*q) != embed)
      return unknown(n, why + " over a tensor whose channels are not its last dimension");
    auto& root = spaces_[find(q->segments[0])];
    const std::string out = path.empty() ? "out_proj" : path + ".out_proj";
    root.slices.push_back({path, "in_proj_weight", 1, 0, 1, 0, "consumer"});
    for (int64_t k = 0; k < 3; ++k) {
      root.slices.push_back({path, "in_proj_weight", 0, k * embed, 1, 0, "producer"});
      if (mha.attr("in_proj_bias").isTensor()) root.slices.push_back({path, "in_proj_bias", 0, k * embed, 1, 0, "producer"});
    }
    root.slices.push_back({out, "weight", 0, 0, 1, 0, "producer"});
    root.slices.push_back({out, "weight", 1, 0, 1, 0, "consumer"});
    if (submodule_at(module_, out).attr("bias").isTensor()) root.slices.push_back({out, "bias", 0, 0, 1, 0, "producer"});
    const int64_t heads = mha.attr("num_heads").toInt();
    for (const char* name : {"embed_dim", "kdim", "vdim"}) root.counts.push_back({path, name, 1});
    root.counts.push_back({path, "head_dim", heads});
    root.multiple_of = std::lcm(root.multiple_of, heads);
    weight_order_.push_back({path, "in_proj_weight"});  // unstructured pruning zeroes attention's matmuls too
    weight_order_.push_back({out, "weight"});
    tuples_[n->output()] = {*q, std::nullopt};
  }

  void tuple_item(Node* n, const std::string& kind) {
    auto it = tuples_.find(n->input(0));
    if (it == tuples_.end()) return unknown(n, kind);
    const auto items = it->second;
    if (kind == "prim::TupleIndex") {
      auto index = torch::jit::toIValue(n->input(1));
      if (!index || !index->isInt() || size_t(index->toInt()) >= items.size()) return unknown(n, kind);
      if (items[size_t(index->toInt())]) info_[n->output()] = *items[size_t(index->toInt())];
      return;
    }
    for (size_t i = 0; i < n->outputs().size() && i < items.size(); ++i)
      if (items[i]) info_[n->output(i)] = *items[i];
  }

  void flatten_like(Node* n, const std::string& kind, bool from_dim1) {
    ValueInfo* x = info(n->input(0));
    if (!x) return;
    if (!from_dim1 || x->layout == Layout::channels_last) return unknown(n, kind + " to another layout");
    info_[n->output()] = {x->segments, Layout::flat, 2};
  }
  void flatten(Node* n, const std::string& kind) {
    auto start = torch::jit::toIValue(n->input(1)), end = torch::jit::toIValue(n->input(2));
    flatten_like(n, kind, start && end && start->isInt() && end->isInt() && start->toInt() == 1 && end->toInt() == -1);
  }
  // x.view(x.size(0), -1) / x.reshape(n, -1): a flatten from dimension 1. x.reshape(n, C, h * w) with C the
  // channel count read from an int attribute (ViT's hidden_dim): the spatial dimensions merged, the
  // attribute a count surgery updates.
  void reshape(Node* n, const std::string& kind) {
    Node* shape = n->input(1)->node();
    const bool listed = shape->kind() == c10::prim::ListConstruct;
    if (listed && shape->inputs().size() == 3) return merge_spatial(n, kind, shape->input(1));
    auto last = listed && shape->inputs().size() == 2 ? torch::jit::toIValue(shape->input(1)) : c10::nullopt;
    flatten_like(n, kind, last && last->isInt() && last->toInt() == -1);
  }
  void merge_spatial(Node* n, const std::string& kind, Value* channel_entry) {
    ValueInfo* x = info(n->input(0));
    if (!x) return;
    auto count = folded_ints_.find(channel_entry);
    if (x->layout != Layout::channels_first || count == folded_ints_.end() || x->segments.size() != 1)
      return unknown(n, kind + " to another layout");
    auto c = torch::jit::toIValue(channel_entry);
    auto& root = spaces_[find(x->segments[0])];
    if (!c || c->toInt() != root.size) return unknown(n, kind + " to another layout");
    root.counts.push_back(count->second);
    info_[n->output()] = {x->segments, Layout::channels_first, 3};
  }

  // The index of the channel dimension, -1 for the last when the rank is unknown.
  static int64_t channel_dim(const ValueInfo& x) {
    if (x.layout == Layout::channels_first) return 1;
    return x.rank ? x.rank - 1 : -1;
  }
  // Whether dimension `d` (negative counts from the end) is the channel dimension; nullopt when unknown.
  static std::optional<bool> is_channel_dim(const ValueInfo& x, int64_t d) {
    if (x.layout == Layout::flat) return std::nullopt;
    if (d < 0 && x.rank) d += x.rank;
    const int64_t c = channel_dim(x);
    if ((d < 0) != (c < 0)) return std::nullopt;  // one counted from the end, the rank unknown
    return d == c;
  }

  // x.permute(0, 2, 1): the channel dimension moves; it must land first after the batch or last.
  void permute(Node* n, const std::string& kind) {
    ValueInfo* x = info(n->input(0));
    if (!x) return;
    auto order = torch::jit::toIValue(n->input(1));
    if (!order || !order->isIntList() || x->layout == Layout::flat) return unknown(n, kind + " to another layout");
    const auto dims = order->toIntVector();
    const int64_t rank = int64_t(dims.size()), from = x->layout == Layout::channels_first ? 1 : rank - 1;
    const auto at = std::find(dims.begin(), dims.end(), from) - dims.begin();
    if (at == 1 && rank > 2) return void(info_[n->output()] = {x->segments, Layout::channels_first, rank});
    if (at == rank - 1) return void(info_[n->output()] = {x->segments, Layout::channels_last, rank});
    unknown(n, kind + " to another layout");
  }

  // x.expand(n, -1, -1) keeps the last dimension; a tensor attribute expanded (ViT's class token) becomes a
  // tracked value whose channels are its last dimension.
  void expand(Node* n, const std::string& kind) {
    Node* sizes = n->input(1)->node();  // [n, -1, -1]: a list with a computed batch
    auto last = sizes->kind() == c10::prim::ListConstruct && sizes->inputs().size() > 0
                    ? torch::jit::toIValue(sizes->inputs().back())
                    : c10::nullopt;
    ValueInfo* x = info(n->input(0));
    if (!x) x = parameter_value(n->input(0));
    if (!x) return;
    if (!last || !last->isInt() || last->toInt() != -1 || x->layout != Layout::channels_last)
      return unknown(n, kind + " of the channel dimension");
    info_[n->output()] = {x->segments, Layout::channels_last, int64_t(sizes->inputs().size())};
  }

  // A tensor attribute read as a value (a class token, a position embedding, a layer scale): its elements a
  // "parameter" slice of the group it joins. Beside a channels-first value of known rank (ConvNeXt's
  // `layer_scale * x`, a [C, 1, 1] parameter) its channels are the dimension that broadcasting aligns with
  // dimension 1; otherwise they are its last dimension.
  ValueInfo* parameter_value(Value* v, const ValueInfo* beside = nullptr) {
    const Attr* a = tensor_attr(v);
    if (!a || a->value.toTensor().dim() < 1) return nullptr;
    const auto t = a->value.toTensor();
    if (beside && beside->layout == Layout::channels_first) {
      const int64_t d = 1 - (beside->rank - t.dim());  // t's dimension under the value's dimension 1
      if (!beside->rank || t.dim() > beside->rank || d < 0 || d >= t.dim()) return nullptr;
      ValueInfo p{{new_space(t.size(d))}, Layout::channels_first, beside->rank};
      add_slices(p, *a, d, "parameter");
      return &(info_[v] = p);
    }
    ValueInfo p{{new_space(t.size(-1))}, Layout::channels_last, t.dim()};
    add_slices(p, *a, t.dim() - 1, "parameter");
    return &(info_[v] = p);
  }
  // A one-element tensor attribute broadcasts like a scalar: it carries no channels.
  bool scalar_attribute(Value* v) const {
    const Attr* a = tensor_attr(v);
    return a && a->value.toTensor().numel() == 1;
  }

  // x[:, 0] and x[:, 1:]: indexing a dimension other than the channels'.
  void index_other_dim(Node* n, const std::string& kind) {
    ValueInfo* x = info(n->input(0));
    if (!x) return;
    auto dim = torch::jit::toIValue(n->input(1));
    auto channel = dim && dim->isInt() ? is_channel_dim(*x, dim->toInt()) : std::nullopt;
    if (!channel || *channel) return unknown(n, kind + " of the channel dimension");
    const bool drops = kind == "aten::select";
    if (drops && x->layout == Layout::channels_first && dim->toInt() == 0) return unknown(n, kind + " of the batch");
    info_[n->output()] = {x->segments, x->layout, x->rank ? x->rank - (drops ? 1 : 0) : 0};
  }

  void reduce(Node* n, const std::string& kind) {
    ValueInfo* x = info(n->input(0));
    if (!x) return;
    auto dims = torch::jit::toIValue(n->input(1));
    auto keep = n->inputs().size() > 2 ? torch::jit::toIValue(n->input(2)) : c10::nullopt;
    bool other = x->layout != Layout::flat && dims && dims->isIntList() && keep && keep->isBool();
    for (int64_t d : other ? dims->toIntVector() : std::vector<int64_t>{}) {
      auto channel = is_channel_dim(*x, d);
      other = other && channel && !*channel && (x->layout == Layout::channels_last || d >= 2);
    }
    if (!other) return unknown(n, kind + " over the channel dimension");
    const bool keep_dims = keep->toBool();
    const int64_t rank = x->rank ? (keep_dims ? x->rank : x->rank - int64_t(dims->toIntVector().size())) : 0;
    if (x->layout == Layout::channels_last) return void(info_[n->output()] = {x->segments, Layout::channels_last, rank});
    info_[n->output()] = {x->segments, keep_dims ? Layout::channels_first : Layout::flat, keep_dims ? rank : 2};
  }

  // Lists of tracked tensors: their items in order, as appended so far. A list any other op reads has
  // escaped: its items, and any appended later, are blocked.
  void list(Node* n) {
    bool tensors = false;
    for (Value* v : n->inputs()) tensors = tensors || info(v);
    if (tensors)
      lists_[n->output()] = std::make_shared<TensorList>(
          TensorList{std::vector<Value*>(n->inputs().begin(), n->inputs().end()), {}});
  }
  void append(Node* n, const std::string& kind) {
    auto it = lists_.find(n->input(0));
    if (it == lists_.end()) return unknown(n, kind + " to a list lite cannot follow");
    if (!it->second->escaped.empty()) block_value(n->input(1), it->second->escaped);
    it->second->items.push_back(n->input(1));
    if (n->outputs().size() == 1 && carries_tensor(n->output()->type())) lists_[n->output()] = it->second;
  }

  // Along the channels, the spaces are concatenated; along another dimension (ViT's class token before
  // the patches), every item carries the same channels and their spaces are united.
  void cat(Node* n, const std::string& kind) {
    auto items = lists_.find(n->input(0));
    auto dim = torch::jit::toIValue(n->input(1));
    const std::string why = kind + " of tensors lite cannot follow";
    if (items == lists_.end() || !dim || !dim->isInt() || items->second->items.empty()) return unknown(n, why);
    std::vector<ValueInfo> parts;
    for (Value* v : items->second->items) {
      ValueInfo* x = info(v);
      if (!x) return unknown(n, why);
      parts.push_back(*x);
    }
    auto channel = is_channel_dim(parts[0], dim->toInt());
    if (!channel) return unknown(n, why);
    ValueInfo y = parts[0];
    if (*channel) {
      y.segments.clear();
      for (const auto& x : parts) {
        if (x.layout != parts[0].layout) return unknown(n, why);
        y.segments.insert(y.segments.end(), x.segments.begin(), x.segments.end());
      }
    } else {
      for (const auto& x : parts)
        if (!unite_alike(parts[0], x, kind)) return unknown(n, kind + " of tensors with different channel layouts");
    }
    info_[n->output()] = y;
  }

  // Unites the spaces of two values that carry the same channels; false when their layouts differ.
  bool unite_alike(const ValueInfo& a, const ValueInfo& b, const std::string& kind) {
    bool same_shape = a.layout == b.layout && a.segments.size() == b.segments.size();
    for (size_t i = 0; same_shape && i < a.segments.size(); ++i)
      same_shape = spaces_[find(a.segments[i])].size == spaces_[find(b.segments[i])].size;
    if (!same_shape) return false;
    for (size_t i = 0; i < a.segments.size(); ++i) unite(a.segments[i], b.segments[i], kind);
    return true;
  }

  void pass_through(Node* n, bool spatial, const std::string& kind) {
    ValueInfo* x = info(n->input(0));
    if (!x) return;
    if (spatial && x->layout != Layout::channels_first) return unknown(n, kind + " over a non-spatial layout");
    info_[n->output()] = *x;
  }

  void binary(Node* n, const std::string& kind) {
    ValueInfo* a = info(n->input(0));
    ValueInfo* b = info(n->input(1));
    if (!a && !b) return;
    // x + self.pos_embedding, self.layer_scale * x: a tensor attribute that broadcasts along the value's channels.
    if (a && !b && scalar_attribute(n->input(1))) return void(info_[n->output()] = *a);
    if (b && !a && scalar_attribute(n->input(0))) return void(info_[n->output()] = *b);
    if (a && !b && a->layout != Layout::flat && tensor_attr(n->input(1))) b = parameter_value(n->input(1), a);
    if (b && !a && b->layout != Layout::flat && tensor_attr(n->input(0))) a = parameter_value(n->input(0), b);
    const bool b_tensor = carries_tensor(n->input(1)->type());
    if (!a || (!b && b_tensor)) return unknown(n, kind + " with a tensor lite cannot trace");
    if (b && !unite_alike(*a, *b, kind)) return unknown(n, kind + " of tensors with different channel layouts");
    info_[n->output()] = *a;
  }

  // A weight used by two calls (a module called twice) ties the spaces it appears in.
  void unite_shared_slices() {
    std::map<std::tuple<std::string, int64_t, int64_t, int64_t>, int> seen;
    for (size_t s = 0; s < spaces_.size(); ++s) {
      if (find(int(s)) != int(s)) continue;
      for (const auto& sl : std::vector<TensorSlice>(spaces_[s].slices)) {
        auto key = std::make_tuple(sl.path(), sl.dim, sl.offset, sl.factor);
        auto [it, fresh] = seen.emplace(key, int(s));
        if (!fresh) unite(it->second, int(s), "a module called twice");
      }
    }
  }

  DependencyGraph collect() {
    DependencyGraph g;
    for (const auto& w : weight_order_)
      if (std::none_of(g.weights.begin(), g.weights.end(),
                       [&](const WeightRef& r) { return r.module == w.module && r.attr == w.attr; }))
        g.weights.push_back(w);
    for (size_t s = 0; s < spaces_.size(); ++s) {
      if (find(int(s)) != int(s)) continue;
      const Space& sp = spaces_[s];
      ChannelGroup group;
      group.channels = sp.size;
      group.blocked = sp.blocked;
      std::set<std::string> seen_slices;
      for (const auto& sl : sp.slices) {
        std::string key = sl.path() + "/" + std::to_string(sl.dim) + "/" + std::to_string(sl.offset) + "/" +
                          std::to_string(sl.factor) + "/" + std::to_string(sl.fold);
        if (!seen_slices.insert(key).second) continue;
        group.slices.push_back(sl);
        if (sl.role != "consumer" && std::find(group.layers.begin(), group.layers.end(), sl.module) == group.layers.end())
          group.layers.push_back(sl.module);
        if (sl.role == "producer" && group.name.empty()) group.name = sl.module;
        auto t = tensor_at(module_, sl.module, sl.attr);
        if (group.blocked.empty() && (sl.fold ? sl.fold : sl.offset + sp.size) * sl.factor > t.size(sl.dim))
          group.blocked = "shape mismatch at " + sl.path();
      }
      if (group.name.empty()) continue;  // no layer produces these channels (model input)
      std::set<std::string> dw(sp.depthwise.begin(), sp.depthwise.end());
      group.depthwise.assign(dw.begin(), dw.end());
      std::set<std::string> norms(sp.layer_norms.begin(), sp.layer_norms.end());
      group.layer_norms.assign(norms.begin(), norms.end());
      std::set<std::pair<std::string, std::string>> seen_counts;
      for (const auto& c : sp.counts)
        if (seen_counts.insert({c.module, c.name}).second) group.counts.push_back(c);
      group.multiple_of = std::lcm(sp.multiple_of, sp.blocks);
      group.blocks = sp.blocks;
      if (group.blocked.empty() && sp.size % sp.multiple_of)
        group.blocked = std::to_string(sp.size) + " channels are not a multiple of " + std::to_string(sp.multiple_of);
      g.groups.push_back(std::move(group));
    }
    return g;
  }

  const torch::jit::Module& module_;
  std::vector<Space> spaces_;
  std::unordered_map<Value*, ValueInfo> info_;
  std::unordered_map<Value*, std::vector<std::optional<ValueInfo>>> tuples_;  // attention's (output, weights)
  std::unordered_map<Value*, CountAttribute> folded_ints_;
  const std::vector<c10::IValue>& example_;
  std::unordered_map<Value*, std::shared_ptr<TensorList>> lists_;  // aliases share one list
  std::unordered_map<Value*, Attr> attrs_;
  std::map<const c10::ClassType*, bool> depthwise_type_;
  std::map<const c10::ClassType*, std::set<int64_t>> type_sizes_;
  std::vector<WeightRef> weight_order_;
};

}  // namespace

DependencyGraph build_dependency_graph(const torch::jit::Module& module, const std::vector<c10::IValue>& example) {
  return Analyzer(module, example).run();
}

}  // namespace lite::prune

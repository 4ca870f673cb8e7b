#pragma once
// What the dependency analysis's rules share: the walk's state over one graph (the channel spaces, what each
// tensor value carries, the lists and attributes it follows) with the helpers every rule uses, and the rule
// table from op kind to rule (dependency_rules.cpp). One file per family of rules, as cache/ has one per
// policy:
//   rules_conv_linear.cpp  conv, grouped and transposed conv, linear, embedding: weights that open spaces
//   rules_norms.cpp        batch_norm, layer_norm, torchvision's FrozenBatchNorm2d (one call): their tensors
//                          follow the channels
//   rules_shape.cpp        flatten, view/reshape, permute, expand, select/slice, reductions, pad: where the channels are
//   rules_attention.cpp    nn.MultiheadAttention and Swin's window attention as one call each, and the items of the
//                          tuple nn.MultiheadAttention returns
//   rules_lists_cat.cpp    tensor lists (ListConstruct, append, list(), a read at a constant index) and cat
//   rules_dicts.cpp        dicts built and read back with constant string keys (IntermediateLayerGetter), and
//                          their values() in order (a scripted FeaturePyramidNetwork)
//   rules_tuples.cpp       tuples built in the graph (a traced submodule's dict or tuple result)
//   rules_elementwise.cpp  activations, dropout, pooling (pass the channels through), add/mul/sub/div (unite them)
//   rules_control.cpp      an `if` or loop left after folding (a metadata guard is skipped)
// A rule either records what its outputs carry or calls Walk::unknown, which blocks every space the node
// reads with the reason; an op with no rule that outputs a tensor, or that writes what it reads into a
// container (insert, update, SetAttr), is unknown with its kind as the reason.
#include <torch/script.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "lite/prune/channel_groups.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune::detail {

using torch::jit::Node;
using torch::jit::Value;

enum class Layout { channels_first, channels_last, flat };  // dim 1; the last dim; flattened from dim 1

// What a tensor value carries along its channel dimension.
struct ValueInfo {
  std::vector<int> segments;  // channel spaces in order along the channel dimension
  Layout layout = Layout::channels_first;
  int64_t rank = 0;           // 0 when unknown
};

struct TensorList {
  std::vector<Value*> items;
  std::string escaped;  // why the list is blocked ("" while only cat and append read it)
};

// A dict whose keys are constant strings: what each key holds at this point of the walk.
struct TensorDict {
  std::map<std::string, Value*> items;
  std::string escaped;  // why the dict is blocked ("" while only constant-key reads and writes touch it)
  std::vector<std::string> order = {};  // the keys in insertion order (what values() lists)
};

// A module attribute a value was read from (`module` its owner's path, "" for the root).
struct Attr {
  std::string module, name;
  c10::IValue value;
};

bool carries_tensor(const c10::TypePtr& type);

// Module types whose every instance is a depthwise conv, and the channel counts of each type's instances.
struct DepthwiseTypes {
  std::map<const c10::ClassType*, bool> depthwise;
  std::map<const c10::ClassType*, std::set<int64_t>> sizes;
};
DepthwiseTypes index_depthwise_types(const torch::jit::Module& module);  // rules_conv_linear.cpp

// The state of one walk over a forward graph, and the helpers the rules share (dependency_values.cpp).
struct Walk {
  Walk(const torch::jit::Module& module, const std::vector<c10::IValue>& example)
      : module(module), example(example), depthwise_types(index_depthwise_types(module)) {}

  const torch::jit::Module& module;
  const std::vector<c10::IValue>& example;
  ChannelSpaces spaces;
  std::unordered_map<Value*, ValueInfo> values;                              // tracked tensors
  std::unordered_map<Value*, std::vector<std::optional<ValueInfo>>> tuples;  // attention's (output, weights)
  std::unordered_map<Value*, CountAttribute> folded_ints;  // constants that were int attributes
  std::unordered_map<Value*, std::shared_ptr<TensorList>> lists;  // aliases share one list
  std::unordered_map<Value*, std::shared_ptr<TensorDict>> dicts;  // aliases share one dict
  std::unordered_map<Value*, Attr> attrs;
  DepthwiseTypes depthwise_types;
  std::vector<WeightRef> weights;  // conv/linear/attention weights in graph order, repeats included

  int new_space(int64_t size, const std::string& blocked = {}) { return spaces.add(size, blocked); }
  ValueInfo* info(Value* v);
  const Attr* tensor_attr(Value* v) const;
  // The channels of all segments, 0 when one is unknown.
  int64_t total(const ValueInfo& vi);
  void block_info(const ValueInfo& vi, const std::string& why);
  // Blocks what `v` carries: its spaces, a list's or dict's items (and later appends), a tuple's items.
  void block_value(Value* v, const std::string& why);
  // `to` carries what `from` carries (the same spaces, list, dict or tuple): a value read back from a container.
  void alias(Value* to, Value* from);
  // Adds a slice of attribute `a` along `dim` to each segment, at the segment's offset along the channels.
  void add_slices(const ValueInfo& vi, const Attr& a, int64_t dim, const std::string& role, int64_t factor = 1);
  // Every tracked tensor the node reads is blocked; its tensor outputs start blocked spaces.
  void unknown(Node* n, const std::string& why);
  // A tensor attribute read as a value, tracked as a "parameter" slice (see dependency_values.cpp).
  ValueInfo* parameter_value(Value* v, const ValueInfo* beside = nullptr);
  // A one-element tensor attribute broadcasts like a scalar: it carries no channels.
  bool scalar_attribute(Value* v) const;
  // Unites the spaces of two values that carry the same channels; false when their layouts differ.
  bool unite_alike(const ValueInfo& a, const ValueInfo& b, const std::string& kind);
  // The index of the channel dimension, -1 for the last when the rank is unknown.
  static int64_t channel_dim(const ValueInfo& x);
  // Whether dimension `d` (negative counts from the end) is the channel dimension; nullopt when unknown.
  static std::optional<bool> is_channel_dim(const ValueInfo& x, int64_t d);
};

// A rule: what op `kind` at node `n` does to the channels of the values it reads and writes.
using Rule = void (*)(Walk& walk, Node* n, const std::string& kind);

struct OpRule {
  std::vector<std::string> kinds;  // qualified op symbols ("aten::conv2d", "prim::ListConstruct")
  Rule rule;
};

// Every rule with the op kinds it reads, one entry per rule (dependency_rules.cpp).
const std::vector<OpRule>& op_rules();
// The rule for `kind`, nullptr when no rule reads it.
Rule find_rule(const std::string& kind);

// ---- rules, by family ----------------------------------------------------------------------------

void skip_rule(Walk& w, Node* n, const std::string& kind);  // constants, attribute reads

void conv_rule(Walk& w, Node* n, const std::string& kind);  // rules_conv_linear.cpp
void conv_transpose_rule(Walk& w, Node* n, const std::string& kind);
void linear_rule(Walk& w, Node* n, const std::string& kind);
void embedding_rule(Walk& w, Node* n, const std::string& kind);

void batch_norm_rule(Walk& w, Node* n, const std::string& kind);  // rules_norms.cpp
void layer_norm_rule(Walk& w, Node* n, const std::string& kind);
void frozen_batch_norm_rule(Walk& w, Node* n, const std::string& kind);  // a prim::CallMethod (call_rule)

void flatten_rule(Walk& w, Node* n, const std::string& kind);  // rules_shape.cpp
void reshape_rule(Walk& w, Node* n, const std::string& kind);
void permute_rule(Walk& w, Node* n, const std::string& kind);
void expand_rule(Walk& w, Node* n, const std::string& kind);
void index_other_dim_rule(Walk& w, Node* n, const std::string& kind);
void reduce_rule(Walk& w, Node* n, const std::string& kind);
void pad_rule(Walk& w, Node* n, const std::string& kind);

void call_rule(Walk& w, Node* n, const std::string& kind);  // rules_attention.cpp
void tuple_item_rule(Walk& w, Node* n, const std::string& kind);

void list_rule(Walk& w, Node* n, const std::string& kind);  // rules_lists_cat.cpp
void append_rule(Walk& w, Node* n, const std::string& kind);
void cat_rule(Walk& w, Node* n, const std::string& kind);

void dict_rule(Walk& w, Node* n, const std::string& kind);  // rules_dicts.cpp
void set_item_rule(Walk& w, Node* n, const std::string& kind);
void get_item_rule(Walk& w, Node* n, const std::string& kind);
void values_rule(Walk& w, Node* n, const std::string& kind);
void list_copy_rule(Walk& w, Node* n, const std::string& kind);  // rules_lists_cat.cpp
void list_item_rule(Walk& w, Node* n, const std::string& kind);  // aten::__getitem__ of a list (get_item_rule)

void tuple_construct_rule(Walk& w, Node* n, const std::string& kind);  // rules_tuples.cpp

void elementwise_rule(Walk& w, Node* n, const std::string& kind);  // rules_elementwise.cpp
void spatial_rule(Walk& w, Node* n, const std::string& kind);
void binary_rule(Walk& w, Node* n, const std::string& kind);

// A node with blocks (an `if` or a loop), which the table does not dispatch (rules_control.cpp).
void control_rule(Walk& w, Node* n, const std::string& kind);

}  // namespace lite::prune::detail

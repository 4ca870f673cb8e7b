// Channel dependency groups over a TorchScript graph, the way Torch-Pruning's DepGraph builds them over
// Python modules, but read from the file itself so any scripted model works without its source.
//
// Algorithm: copy forward's graph, inline every submodule call but attention's and FrozenBatchNorm2d's, replace
// bool/int/float attribute reads (training, use_res_connect) by their values and fold constants, decide the `if`s
// that depend on the input by running it once, and unroll loops whose trip count then is a constant (at most 64:
// a scripted FPN's loop over its levels) (graph_prep.cpp), so only the branches that run remain. Then walk
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
//   - a dict built and read back with constant string keys (IntermediateLayerGetter's features, a dict
//     attribute's lookups folded to constants first) passes each value through under its key;
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
// that survived, an op that stores a value where lite cannot follow it, the model's inputs and outputs)
// blocks every space it touches, with the op as the reason:
// a group is pruned only when every op on its channels is one of the rules above.
//
// Files: this one prepares the graph and walks it, picking each node's rule from the table in
// dependency_rules.cpp (one file per family of rules, listed in dependency_rules_internal.hpp); the
// union-find over channel spaces and the groups it yields are channel_groups.cpp; the helpers the rules share
// on tracked values are dependency_values.cpp.
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/peephole.h>

#include <algorithm>

#include "lite/prune/dependency_rules_internal.hpp"

namespace lite::prune {

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

using detail::Attr;
using detail::Walk;
using torch::jit::Node;
using torch::jit::Value;

// Records where every attribute read (prim::GetAttr, nested ones too) comes from: its owner's path and value.
void resolve_attributes(Walk& w, torch::jit::Block* block, Value* self) {
  for (Node* n : block->nodes()) {
    for (auto* b : n->blocks()) resolve_attributes(w, b, self);
    if (n->kind() != c10::prim::GetAttr) continue;
    Value* in = n->input(0);
    c10::IValue parent;
    std::string path;
    if (in == self) {
      parent = w.module._ivalue();
    } else if (auto it = w.attrs.find(in); it != w.attrs.end() && it->second.value.isObject()) {
      parent = it->second.value;
      path = it->second.module.empty() ? it->second.name : it->second.module + "." + it->second.name;
    } else {
      continue;
    }
    const std::string name = n->s(c10::attr::name);
    w.attrs[n->output()] = {path, name, parent.toObject()->getAttr(name)};
  }
}

// Scalar and int-list attributes become constants. Int attributes keep their origin (folded_ints): a reshape
// to one of them (ViT's hidden_dim) is a count that surgery updates.
void fold_scalar_attributes(Walk& w, torch::jit::Graph& graph) {
  resolve_attributes(w, graph.block(), graph.inputs()[0]);
  for (auto& [value, attr] : w.attrs) {
    const auto& v = attr.value;
    // int lists too: torchvision's Permute module (ConvNeXt) reads its order from one
    if (!(v.isBool() || v.isInt() || v.isDouble() || v.isIntList())) continue;
    torch::jit::WithInsertPoint guard(value->node());
    Value* constant = graph.insertConstant(v);
    value->replaceAllUsesWith(constant);
    if (v.isInt()) w.folded_ints[constant] = {attr.module, attr.name, 1};
  }
}

// Whether an op may write what it reads into a container or an attribute (list.insert, dict.update,
// prim::SetAttr): its schema says it mutates an argument, or it has no schema to say it does not.
bool may_store(Node* n) {
  const c10::FunctionSchema* schema = n->maybeSchema();
  return !schema || schema->is_mutable();
}

// A lookup by a constant key in a dict attribute of immutable values becomes that value (IntermediateLayerGetter's
// `name in self.return_layers` and `self.return_layers[name]`), so the keys it writes its dict under are constants
// the dict rule follows. Not when any read of a dict attribute goes to another op, which might change it.
void fold_dict_attribute_lookups(Walk& w, torch::jit::Graph& graph) {
  std::vector<Node*> lookups;
  for (auto& [value, attr] : w.attrs) {
    if (!attr.value.isGenericDict()) continue;
    for (const torch::jit::Use& use : value->uses()) {
      const auto kind = use.user->kind();
      if (kind != c10::aten::__getitem__ && kind != c10::aten::__contains__) return;
      lookups.push_back(use.user);
    }
  }
  for (Node* n : lookups) {
    const auto dict = w.attrs.at(n->input(0)).value.toGenericDict();
    auto key = torch::jit::toIValue(n->input(1));
    if (!key) continue;
    c10::IValue folded;
    if (n->kind() == c10::aten::__contains__) {
      folded = dict.contains(*key);
    } else if (auto it = dict.find(*key); it != dict.end()) {
      const c10::IValue& v = it->value();
      if (!(v.isString() || v.isInt() || v.isDouble() || v.isBool())) continue;
      folded = v;
    } else {
      continue;
    }
    torch::jit::WithInsertPoint guard(n);
    n->output()->replaceAllUsesWith(graph.insertConstant(folded));
  }
}

// The node's rule from the table; a node with blocks is control flow; an op no rule reads blocks what it
// touches, unless it outputs no tensor and stores nothing (aten::size, aten::dim, raise read shapes or
// scalars only). One that stores a tensor somewhere lite does not follow (a value read back later from
// there would carry channels nobody tracked: the pruned model would not run) is unknown too.
void visit_node(Walk& w, Node* n) {
  const std::string kind = n->kind().toQualString();
  if (!n->blocks().empty()) return detail::control_rule(w, n, kind);
  if (detail::Rule rule = detail::find_rule(kind)) return rule(w, n, kind);
  bool outputs_tensor = false, reads_tensor = false;
  for (Value* v : n->outputs()) outputs_tensor = outputs_tensor || detail::carries_tensor(v->type());
  for (Value* v : n->inputs()) reads_tensor = reads_tensor || detail::carries_tensor(v->type());
  if (!outputs_tensor && !(reads_tensor && may_store(n))) return;
  w.unknown(n, kind);
}

// Conv/linear weights in graph order, once each.
std::vector<WeightRef> unique_weights(const std::vector<WeightRef>& in_order) {
  std::vector<WeightRef> weights;
  for (const auto& w : in_order)
    if (std::none_of(weights.begin(), weights.end(),
                     [&](const WeightRef& r) { return r.module == w.module && r.attr == w.attr; }))
      weights.push_back(w);
  return weights;
}

}  // namespace

DependencyGraph build_dependency_graph(const torch::jit::Module& module, const std::vector<c10::IValue>& example) {
  Walk w(module, example);
  auto graph = module.get_method("forward").graph()->copy();
  inline_calls_except_whole_modules(*graph);
  fold_scalar_attributes(w, *graph);
  fold_dict_attribute_lookups(w, *graph);
  torch::jit::PeepholeOptimize(graph);  // `tensor is None` on a non-optional tensor -> false
  torch::jit::ConstantPropagation(graph);
  torch::jit::EliminateDeadCode(graph);
  decide_branches(graph, module, example);
  w.attrs.clear();
  resolve_attributes(w, graph->block(), graph->inputs()[0]);
  for (size_t i = 1; i < graph->inputs().size(); ++i) {
    Value* input = graph->inputs()[i];
    if (!detail::carries_tensor(input->type())) continue;
    const bool known = i - 1 < example.size() && example[i - 1].isTensor();
    w.values[input] = {{w.new_space(0, "model input")}, detail::Layout::channels_first,
                       known ? example[i - 1].toTensor().dim() : 0};
  }
  for (Node* n : graph->nodes()) visit_node(w, n);
  for (Value* v : graph->return_node()->inputs()) w.block_value(v, "model output");
  w.spaces.unite_shared_slices();
  DependencyGraph g;
  g.weights = unique_weights(w.weights);
  g.groups = w.spaces.groups(module);
  return g;
}

}  // namespace lite::prune

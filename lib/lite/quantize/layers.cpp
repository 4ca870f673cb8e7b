// Finding the quantizable layers: inline a copy of forward, then follow each convolution's and linear's
// weight back through its chain of prim::GetAttr nodes to the module that owns it.
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>
#include <deque>
#include <set>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

const std::map<std::string, std::string>& layer_ops() {
  static const std::map<std::string, std::string> ops = {
      {"aten::conv1d", "Conv1d"},
      {"aten::conv2d", "Conv2d"},
      {"aten::conv3d", "Conv3d"},
      {"aten::conv_transpose1d", "ConvTranspose1d"},
      {"aten::conv_transpose2d", "ConvTranspose2d"},
      {"aten::conv_transpose3d", "ConvTranspose3d"},
      {"aten::linear", "Linear"}};
  return ops;
}

namespace {

// The attribute path of a value read from `self` through GetAttr nodes, e.g. {"features", "0", "weight"}.
std::optional<std::deque<std::string>> attribute_path(torch::jit::Value* v, torch::jit::Value* self) {
  std::deque<std::string> path;
  while (v->node()->kind() == c10::prim::GetAttr) {
    path.push_front(v->node()->s(c10::attr::name));
    v = v->node()->input(0);
  }
  if (v != self || path.empty()) return std::nullopt;
  return path;
}

std::optional<torch::Tensor> tensor_at(const torch::jit::Module& root, const std::deque<std::string>& path) {
  c10::IValue cur = root._ivalue();
  for (const auto& name : path) {
    if (!cur.isObject()) return std::nullopt;
    auto obj = cur.toObject();
    if (!obj->type()->hasAttribute(name)) return std::nullopt;
    cur = obj->getAttr(name);
  }
  if (!cur.isTensor()) return std::nullopt;
  return cur.toTensor();
}

void collect(torch::jit::Block* block, std::vector<torch::jit::Node*>& out) {
  for (auto* n : block->nodes()) {
    if (layer_ops().count(n->kind().toQualString())) out.push_back(n);
    for (auto* b : n->blocks()) collect(b, out);
  }
}

}  // namespace

torch::jit::Module submodule_at(const torch::jit::Module& module, const std::string& path) {
  torch::jit::Module m = module;
  if (path.empty()) return m;
  for (const auto& part : split(path, '.')) m = m.attr(part).toModule();
  return m;
}

namespace {

// Each conv/linear node of the inlined forward whose weight is a floating-point tensor attribute, with the
// name of the layer that owns it (its module's path, or the attribute's name on the root module).
struct FoundLayer {
  torch::jit::Node* node;
  std::deque<std::string> weight_path;
  torch::Tensor weight;
  std::string name;
};

// Calls visit(node, self) for every node of an inlined copy of forward, nested blocks included.
template <typename Visit>
void visit_forward_nodes(const torch::jit::Module& module, Visit visit) {
  auto graph = module.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  torch::jit::Value* self = graph->inputs().at(0);
  std::vector<torch::jit::Block*> blocks{graph->block()};
  while (!blocks.empty()) {
    torch::jit::Block* block = blocks.back();
    blocks.pop_back();
    for (auto* n : block->nodes()) {
      for (auto* b : n->blocks()) blocks.push_back(b);
      visit(n, self);
    }
  }
}

template <typename Visit>
void visit_layers(const torch::jit::Module& module, Visit visit) {
  auto graph = module.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  torch::jit::Value* self = graph->inputs().at(0);
  std::vector<torch::jit::Node*> nodes;
  collect(graph->block(), nodes);
  std::set<std::string> seen;
  for (auto* n : nodes) {
    auto wpath = attribute_path(n->input(1), self);
    if (!wpath) continue;
    auto weight = tensor_at(module, *wpath);
    if (!weight || !weight->is_floating_point()) continue;
    std::deque<std::string> owner(wpath->begin(), wpath->end() - 1);
    std::string name = join(std::vector<std::string>(owner.begin(), owner.end()), ".");
    if (name.empty()) name = wpath->back();  // a weight kept on the root module (functional code)
    if (!seen.insert(name).second) continue;
    visit(FoundLayer{n, *wpath, *weight, name});
  }
}

// The class name of the module at `path` ("Conv2d", "MultiheadAttention"), or "".
std::string module_type(const torch::jit::Module& root, const std::string& path) {
  auto type = submodule_at(root, path).type()->name();
  return type ? type->name() : std::string();
}

}  // namespace

std::vector<LayerInfo> find_layers(const torch::jit::Module& module) {
  std::vector<LayerInfo> layers;
  visit_layers(module, [&](const FoundLayer& found) {
    auto* n = found.node;
    LayerInfo l;
    l.op = n->kind().toQualString();
    l.kind = layer_ops().at(l.op);
    l.name = found.name;
    if (found.weight_path.size() > 1) {  // the weight belongs to a submodule, named l.name
      std::string kind = module_type(module, l.name);
      if (kind.rfind("Conv", 0) == 0 || kind.rfind("Linear", 0) == 0) l.kind = kind;
      // nn.MultiheadAttention's own in_proj_weight, or the weight of its out_proj child
      const auto parent = l.name.rfind('.');
      l.in_multihead_attention =
          kind == "MultiheadAttention" ||
          module_type(module, parent == std::string::npos ? std::string() : l.name.substr(0, parent)) ==
              "MultiheadAttention";
    }
    l.weight_shape = found.weight.sizes().vec();
    torch::jit::Value* self = n->owningGraph()->inputs().at(0);
    if (n->inputs().size() > 2) {
      if (auto bpath = attribute_path(n->input(2), self))
        if (auto bias = tensor_at(module, *bpath)) l.bias = bias->numel();
    }
    layers.push_back(std::move(l));
  });
  return layers;
}

namespace {

const char* float_only_kind(const std::string& op) {
  if (op == "aten::embedding" || op == "aten::embedding_bag") return "Embedding";
  if (op == "aten::lstm") return "LSTM";
  if (op == "aten::gru") return "GRU";
  if (op == "aten::rnn_tanh" || op == "aten::rnn_relu") return "RNN";
  return nullptr;
}

// The tensors a value holds, read from the module: a tensor attribute, a list attribute (scripted nn.LSTM's
// _flat_weights) or a prim::ListConstruct of attributes (traced); with the owning module's path.
std::vector<torch::Tensor> weights_of(torch::jit::Value* v, torch::jit::Value* self, const torch::jit::Module& module,
                                      std::string& owner) {
  std::vector<torch::jit::Value*> values{v};
  if (v->node()->kind() == c10::prim::ListConstruct) values.assign(v->node()->inputs().begin(), v->node()->inputs().end());
  std::vector<torch::Tensor> out;
  for (auto* value : values) {
    auto path = attribute_path(value, self);
    if (!path) continue;
    c10::IValue cur = module._ivalue();
    for (const auto& name : *path) {
      if (!cur.isObject() || !cur.toObject()->type()->hasAttribute(name)) return {};
      cur = cur.toObject()->getAttr(name);
    }
    if (owner.empty() && path->size() > 1)
      owner = join(std::vector<std::string>(path->begin(), path->end() - 1), ".");
    if (cur.isTensor()) out.push_back(cur.toTensor());
    if (cur.isList())
      for (const auto& e : cur.toListRef())
        if (e.isTensor()) out.push_back(e.toTensor());
  }
  return out;
}

}  // namespace

std::vector<FloatOnlyLayer> find_float_only_layers(const torch::jit::Module& module) {
  std::vector<FloatOnlyLayer> out;
  visit_forward_nodes(module, [&](torch::jit::Node* n, torch::jit::Value* self) {
    const char* kind = float_only_kind(n->kind().toQualString());
    if (!kind || n->inputs().size() < 3) return;
    const bool embedding = std::string(kind) == "Embedding";
    FloatOnlyLayer l;
    l.kind = kind;
    const auto weights = weights_of(n->input(embedding ? 0 : 2), self, module, l.name);
    if (weights.empty() || !weights[0].is_floating_point() || l.name.empty()) return;
    if (std::any_of(out.begin(), out.end(), [&](const FloatOnlyLayer& o) { return o.name == l.name; })) return;
    l.weight_shape = weights[0].sizes().vec();
    for (const auto& w : weights) l.bytes += uint64_t(w.numel()) * uint64_t(w.element_size());
    // dynamic mode's rewrites: aten::embedding tables (not embedding_bag) and plain LSTM/GRU layers
    l.dynamic_int8 = embedding ? n->kind() == c10::aten::embedding && plain_embedding_table(weights[0])
                               : (l.kind == "LSTM" || l.kind == "GRU") && plain_recurrent_weights(weights);
    if (embedding)
      l.reason = l.dynamic_int8 ? "embedding tables stay float in this mode (static and dynamic int8 store them int8 "
                                  "per row; bf16 converts them with the whole graph)"
                                : "embedding bags stay float (bf16 converts them with the whole graph)";
    else
      l.reason = l.dynamic_int8 ? "recurrent weights stay float in this mode (dynamic int8 quantizes them)"
                                : "recurrent weights stay float: projections, missing biases or RNN cells have no "
                                  "int8 rewrite here";
    out.push_back(std::move(l));
  });
  return out;
}

std::vector<std::string> transposed_conv_modules(const torch::jit::Module& module) {
  std::vector<std::string> names;
  visit_forward_nodes(module, [&](torch::jit::Node* n, torch::jit::Value* self) {
    if (std::string(n->kind().toQualString()).rfind("aten::conv_transpose", 0) != 0) return;
    auto path = attribute_path(n->input(1), self);
    if (!path || path->size() < 2) return;  // functional, on the root module: nothing to key a qconfig by
    path->pop_back();
    std::string name = join(std::vector<std::string>(path->begin(), path->end()), ".");
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  });
  return names;
}

std::vector<std::string> multihead_attention_modules(const torch::jit::Module& module) {
  std::vector<std::string> names;
  for (const auto& item : module.named_modules()) {
    const auto type = item.value.type()->name();
    if (!item.name.empty() && type && type->name() == "MultiheadAttention") names.push_back(item.name);
  }
  return names;
}

std::map<std::string, torch::Tensor> layer_weights(const torch::jit::Module& module) {
  std::map<std::string, torch::Tensor> weights;
  visit_layers(module, [&](const FoundLayer& found) { weights.emplace(found.name, found.weight); });
  return weights;
}

std::map<std::string, torch::Tensor> layer_weights(const torch::jit::Module& module, const torch::jit::Module& holder) {
  std::map<std::string, torch::Tensor> weights;
  visit_layers(module, [&](const FoundLayer& found) {
    if (auto weight = tensor_at(holder, found.weight_path)) weights.emplace(found.name, *weight);
  });
  return weights;
}

}  // namespace lite::quantize

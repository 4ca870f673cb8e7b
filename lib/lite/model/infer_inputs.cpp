// Input shapes for a model saved without lite (no "inputs" in its lite.json), so that `lite quantize model.pt`
// needs no flag for typical models.
//
// Algorithm: inline a copy of forward's graph, then for each tensor argument walk forward from it, breadth
// first, through every node that consumes it (element-wise ops, reshapes, containers, the branches of
// prim::If/prim::Loop) until the first node that fixes what the input must look like:
//   aten::conv1d/conv2d/conv3d/_convolution/conv_transpose*  C input channels -> 1xCx1024, 1xCx224x224,
//                                                             1xCx16x112x112 (float32)
//   aten::linear                                              F inputs -> 1xF (float32)
//   aten::embedding / embedding_bag (as the indices)          int64 1x128 token ids
//   aten::lstm/gru/rnn_tanh/rnn_relu                          F inputs -> 1x32xF (batch first) or 32x1xF
// The layer's weight is read through its prim::GetAttr chain from the module itself, which also names the
// layer for the report. The spatial sizes are conventions (ImageNet's 224, a 1024-sample signal, a
// 16-frame 112x112 clip, a 128-token sequence), not facts about the model: the report says which shape was
// used and that {inputs} overrides it, and a model that cannot run at that shape fails its first forward
// with the shape named and the same advice.
//
// Why a graph walk rather than trial forwards: it costs no forward pass (a trial at batch 1 of a large
// model takes seconds and would warm the executor that profile's cold-start figure measures), and the
// answer names the layer it came from, which a user can check.
#include "lite/model/infer_inputs.hpp"

#include <torch/csrc/jit/passes/inliner.h>

#include <deque>
#include <unordered_set>

#include "lite/core/text.hpp"

namespace lite::model {

namespace {

using torch::jit::Node;
using torch::jit::Value;

struct Layer {
  std::string name;  // module path of the layer, e.g. "features.0.0"
  std::string kind;  // "Conv2d", "Linear", "Embedding"
  int64_t size = 0;  // input channels, in features, or vocabulary size
  InputSpec spec;
};

// The object a GetAttr chain ends in (the module itself for the graph's `self`), with its path.
std::optional<c10::IValue> attribute_of(Value* v, const torch::jit::Graph& graph, const torch::jit::Module& module,
                                        std::vector<std::string>& path) {
  if (v == graph.inputs()[0]) return module._ivalue();
  if (auto constant = torch::jit::toIValue(v)) return constant;
  Node* n = v->node();
  if (n->kind() != c10::prim::GetAttr) return std::nullopt;
  auto owner = attribute_of(n->input(0), graph, module, path);
  if (!owner || !owner->isObject()) return std::nullopt;
  const std::string& name = n->s(c10::attr::name);
  auto object = owner->toObject();
  if (!object->type()->hasAttribute(name)) return std::nullopt;
  path.push_back(name);
  return object->getAttr(name);
}

std::optional<int64_t> int_constant(Node* n, size_t index) {
  if (index >= n->inputs().size()) return std::nullopt;
  auto v = torch::jit::toIValue(n->input(index));
  if (!v || !v->isInt()) return std::nullopt;
  return v->toInt();
}

// The first weight of a recurrent op's parameter list: a list attribute (scripted nn.LSTM's _flat_weights) or a
// prim::ListConstruct of attributes (traced).
std::optional<at::Tensor> first_recurrent_weight(Value* params, const torch::jit::Graph& graph,
                                                 const torch::jit::Module& module, std::vector<std::string>& path) {
  Value* first = params;
  if (params->node()->kind() == c10::prim::ListConstruct) {
    if (params->node()->inputs().empty()) return std::nullopt;
    first = params->node()->input(0);
  }
  auto v = attribute_of(first, graph, module, path);
  if (v && v->isList() && !v->toListRef().empty()) v = v->toListRef()[0];
  if (!v || !v->isTensor() || v->toTensor().dim() != 2) return std::nullopt;
  return v->toTensor();
}

// aten::lstm/gru/rnn_tanh/rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
// batch_first): weight_ih_l0 is [gates x hidden, F] -> 1x32xF (batch first) or 32x1xF, a 32-step sequence.
std::optional<Layer> recurrent_layer_of(Node* n, const std::string& op, const torch::jit::Graph& graph,
                                        const torch::jit::Module& module) {
  if (n->inputs().size() < 9) return std::nullopt;
  std::vector<std::string> path;
  auto w = first_recurrent_weight(n->input(2), graph, module, path);
  if (!w) return std::nullopt;
  while (!path.empty() && (path.back() == "_flat_weights" || path.back().rfind("weight_", 0) == 0)) path.pop_back();
  std::vector<std::string> ignored;
  auto batch_first = attribute_of(n->input(8), graph, module, ignored);
  Layer l;
  l.name = path.empty() ? op : join(path, ".");
  const std::string kind = op.substr(op.find("::") + 2);
  l.kind = kind == "lstm" ? "LSTM" : kind == "gru" ? "GRU" : "RNN";
  l.size = w->size(1);
  const bool first = batch_first && batch_first->isBool() && batch_first->toBool();
  l.spec = {first ? std::vector<int64_t>{1, 32, l.size} : std::vector<int64_t>{32, 1, l.size}, "float32"};
  return l;
}

// The layer `n` is when it consumes the walked value as input `offset`, or nullopt.
std::optional<Layer> layer_of(Node* n, size_t offset, const torch::jit::Graph& graph,
                              const torch::jit::Module& module) {
  const std::string op = n->kind().toQualString();
  if ((op == "aten::lstm" || op == "aten::gru" || op == "aten::rnn_tanh" || op == "aten::rnn_relu") && offset == 0)
    return recurrent_layer_of(n, op, graph, module);
  const bool conv = op == "aten::conv1d" || op == "aten::conv2d" || op == "aten::conv3d" || op == "aten::_convolution";
  const bool transposed = op.rfind("aten::conv_transpose", 0) == 0;
  const bool linear = op == "aten::linear";
  const bool embedding = op == "aten::embedding" || op == "aten::embedding_bag";
  if (!((conv || transposed || linear) && offset == 0) && !(embedding && offset == 1)) return std::nullopt;
  std::vector<std::string> path;
  auto weight = attribute_of(n->input(embedding ? 0 : 1), graph, module, path);
  if (!weight || !weight->isTensor()) return std::nullopt;
  const at::Tensor w = weight->toTensor();
  if (!path.empty()) path.pop_back();  // "weight": the layer is its owner
  Layer l;
  l.name = path.empty() ? op : join(path, ".");
  if (embedding) {
    l.kind = "Embedding";
    l.size = w.size(0);
    l.spec = {{1, 128}, "int64"};
    return l;
  }
  if (linear) {
    if (w.dim() != 2) return std::nullopt;
    l.kind = "Linear";
    l.size = w.size(1);
    l.spec = {{1, l.size}, "float32"};
    return l;
  }
  const int64_t spatial = w.dim() - 2;
  if (spatial < 1 || spatial > 3) return std::nullopt;
  bool is_transposed = transposed;
  if (op == "aten::_convolution") {
    auto t = torch::jit::toIValue(n->input(6));
    if (!t || !t->isBool()) return std::nullopt;
    is_transposed = t->toBool();
  }
  // groups: conv{1,2,3}d input 6, _convolution input 8, conv_transpose{1,2,3}d input 6.
  const auto groups = int_constant(n, op == "aten::_convolution" ? 8 : 6).value_or(1);
  l.size = is_transposed ? w.size(0) : w.size(1) * groups;
  l.kind = std::string(is_transposed ? "ConvTranspose" : "Conv") + std::to_string(spatial) + "d";
  static const std::vector<int64_t> kSizes[] = {{1024}, {224, 224}, {16, 112, 112}};
  l.spec.shape = {1, l.size};
  for (int64_t d : kSizes[spatial - 1]) l.spec.shape.push_back(d);
  return l;
}

bool carries_tensors(const c10::TypePtr& type) {
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
    case c10::TypeKind::ListType:
    case c10::TypeKind::TupleType:
    case c10::TypeKind::OptionalType:
    case c10::TypeKind::DictType:
      return true;
    default:
      return false;
  }
}

// Breadth first from `input` through its consumers to the first layer that fixes its shape.
std::optional<Layer> first_layer(Value* input, const torch::jit::Graph& graph, const torch::jit::Module& module) {
  std::deque<Value*> queue{input};
  std::unordered_set<Node*> seen;
  while (!queue.empty()) {
    Value* v = queue.front();
    queue.pop_front();
    for (const auto& use : v->uses()) {
      Node* n = use.user;
      if (auto layer = layer_of(n, use.offset, graph, module)) return layer;
      if (!seen.insert(n).second) continue;
      // A block's return feeds its owner's outputs (prim::If, prim::Loop).
      if (n->kind() == c10::prim::Return && n->owningBlock()->owningNode()) {
        Node* owner = n->owningBlock()->owningNode();
        if (use.offset < owner->outputs().size()) queue.push_back(owner->output(use.offset));
        continue;
      }
      for (Value* out : n->outputs())
        if (carries_tensors(out->type())) queue.push_back(out);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<InferredInputs> infer_inputs(const torch::jit::Module& module) {
  auto method = module.find_method("forward");
  if (!method) return std::nullopt;
  std::shared_ptr<torch::jit::Graph> graph = method->graph()->copy();
  torch::jit::Inline(*graph);
  InferredInputs out;
  for (size_t i = 1; i < graph->inputs().size(); ++i) {
    Value* input = graph->inputs()[i];
    if (input->type()->kind() != c10::TypeKind::TensorType) return std::nullopt;
    auto layer = first_layer(input, *graph, module);
    if (!layer) return std::nullopt;
    out.specs.push_back(layer->spec);
    const bool conv = layer->kind.rfind("Conv", 0) == 0;
    out.spatial_dims.push_back(conv ? int(layer->spec.shape.size()) - 2 : 0);
    const bool features = layer->kind == "Linear" || layer->kind == "LSTM" || layer->kind == "GRU" || layer->kind == "RNN";
    const char* unit = features ? " input features" : layer->kind == "Embedding" ? " embeddings" : " input channels";
    out.reasons.push_back(layer->name + " (" + layer->kind + " with " + std::to_string(layer->size) + unit + ")");
  }
  if (out.specs.empty()) return std::nullopt;
  return out;
}

std::string inferred_inputs_note(const InferredInputs& inferred) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < inferred.specs.size(); ++i)
    parts.push_back(to_string(inferred.specs[i]) + ", inferred from " + inferred.reasons[i]);
  return "the model declares no input shape; using " + join(parts, "; ") + " (batch replaced by each measured "
         "batch size); pass {inputs} SHAPE to override";
}

}  // namespace lite::model

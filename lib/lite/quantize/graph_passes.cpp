// Lite's passes over finalized int8 graphs and inserting small TorchScript functions into a graph.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/remove_dropout.h>
#include <torch/jit.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

std::vector<torch::jit::Value*> insert_function(torch::jit::Graph& graph, torch::jit::Node* before,
                                                const std::string& source, const std::string& name,
                                                const std::vector<torch::jit::Value*>& inputs) {
  auto cu = torch::jit::compile(source);
  auto callee = torch::jit::toGraphFunction(cu->get_function(name)).graph()->copy();
  torch::jit::WithInsertPoint guard(before);
  return torch::jit::insertGraph(graph, *callee, inputs);
}

namespace {

// aten::quantize_per_tensor in this libtorch (built without FBGEMM) quantizes element by element
// (about 5 ns per value here, 0.26 ms for a 64x1x28x28 batch); the same arithmetic in vectorized ops
// takes a fifth of that but has more fixed cost. So large tensors take the vectorized path and small
// ones keep the single op. The result is bit-identical: quantize_val computes
// zero_point + nearbyint(x * (1.0f / scale)) in float, clamped to [0, 255]. This serves the model's
// input and every float island inside the graph (EfficientNet quantizes each SiLU output back to int8:
// 66 quantize_per_tensor calls per forward, 1.6 ms against 0.35 ms for one 32x112x112 activation). The
// elementwise ops keep a channels-last input channels-last, so the next convolution needs no reorder.
const char* kQuantizeSource = R"JIT(
def lite_quantize_per_tensor(x: Tensor, scale: float, inv_scale: float, zero_point: int, threshold: int) -> Tensor:
    if x.numel() > threshold:
        q = torch.round(torch.mul(x, inv_scale))
        if zero_point != 0:
            q = torch.add(q, zero_point)
        q = torch.clamp_(q, 0.0, 255.0)
        return torch._make_per_tensor_quantized_tensor(q.to(0), scale, zero_point)
    return torch.quantize_per_tensor(x, scale, zero_point, 13)
)JIT";

constexpr int64_t kVectorizedQuantizeThreshold = 2048;

bool vectorized_quantize(std::shared_ptr<torch::jit::Graph>& graph) {
  std::vector<torch::jit::Node*> targets;
  for (auto* n : graph->nodes()) {
    if (n->kind() != c10::Symbol::fromQualString("aten::quantize_per_tensor") || n->inputs().size() != 4) continue;
    auto scale = torch::jit::toIValue(n->input(1)), zp = torch::jit::toIValue(n->input(2)),
         dtype = torch::jit::toIValue(n->input(3));
    if (!scale || !zp || !dtype || !scale->isDouble() || !zp->isInt() || !dtype->isInt()) continue;
    if (dtype->toInt() != 13) continue;  // quint8 only
    targets.push_back(n);
  }
  for (auto* n : targets) {
    double scale = torch::jit::toIValue(n->input(1))->toDouble();
    float inv = 1.0f / static_cast<float>(scale);
    torch::jit::WithInsertPoint guard(n);
    std::vector<torch::jit::Value*> args = {n->input(0), n->input(1), graph->insertConstant(double(inv)), n->input(2),
                                            graph->insertConstant(kVectorizedQuantizeThreshold)};
    auto out = insert_function(*graph, n, kQuantizeSource, "lite_quantize_per_tensor", args);
    n->output()->replaceAllUsesWith(out.at(0));
    n->destroy();
  }
  return !targets.empty();
}

// aten::dequantize is a scalar loop here too (1.2 ms for a 32x112x112 activation; the vectorized
// (int_repr - zero_point) * scale below 0.39 ms, bit-identical over every uint8 value and 2000 random
// scales). EfficientNet dequantizes 34 activations per forward for its float SiLU and squeeze-excitation
// ops. Only values a per-tensor quantized op produced are rewritten: the formula reads one scale and
// zero point, and TorchScript here cannot compare a tensor's qscheme at run time.
const char* kDequantizeSource = R"JIT(
def lite_dequantize_per_tensor(x: Tensor, threshold: int) -> Tensor:
    if x.numel() > threshold:
        return torch.mul(torch.sub(x.int_repr().to(6), x.q_zero_point()), x.q_scale())
    return torch.dequantize(x)
)JIT";

bool per_tensor_activation(torch::jit::Node* producer) {
  // Ops that, given a per-tensor quantized input, return one (or produce one from float).
  static const std::set<std::string> per_tensor_outputs = {
      "aten::quantize_per_tensor", "aten::_make_per_tensor_quantized_tensor",
      "aten::sigmoid",             "aten::hardsigmoid",
      "aten::max_pool2d",          "aten::avg_pool2d",
      "aten::adaptive_avg_pool2d", "aten::flatten",
      "aten::relu",                "aten::relu_",
      "aten::hardtanh",            "aten::hardtanh_"};
  std::string kind = producer->kind().toQualString();
  if (kind.rfind("quantized::", 0) == 0)
    return kind.find("unpack") == std::string::npos && kind.find("prepack") == std::string::npos &&
           kind.find("_dynamic") == std::string::npos;
  return per_tensor_outputs.count(kind) > 0;
}

bool vectorized_dequantize(std::shared_ptr<torch::jit::Graph>& graph) {
  std::vector<torch::jit::Node*> targets;
  for (auto* n : graph->nodes()) {
    if (n->kind() != c10::Symbol::fromQualString("aten::dequantize") || n->inputs().size() != 1) continue;
    if (n->input(0)->type()->kind() != c10::TypeKind::TensorType || !per_tensor_activation(n->input(0)->node()))
      continue;
    targets.push_back(n);
  }
  for (auto* n : targets) {
    torch::jit::WithInsertPoint guard(n);
    auto out = insert_function(*graph, n, kDequantizeSource, "lite_dequantize_per_tensor",
                               {n->input(0), graph->insertConstant(kVectorizedQuantizeThreshold)});
    n->output()->replaceAllUsesWith(out.at(0));
    n->destroy();
  }
  return !targets.empty();
}

bool has_dropout(const std::shared_ptr<torch::jit::Graph>& graph) {
  for (auto* n : graph->nodes()) {
    std::string k = n->kind().toQualString();
    if (k == "aten::dropout" || k == "aten::dropout_" || k == "aten::feature_dropout") return true;
  }
  return false;
}

// flatten of a channels-last activation, as onednn's quantized convolutions return them, copies it
// into NCHW order (5 us at batch 1, 30 us at batch 64 on the CNN). Flattening it in its own NHWC order
// is a view; the following linear layer's weight columns are permuted to match, so the result is the
// same integer arithmetic (bit-identical). Applies to
//   flatten(x, 1) -> quantized::linear*  with  x = [pooling or relu of] quantized::conv2d*(...)
// and leaves everything else alone.
bool flatten_channels_last(torch::jit::Module& module, std::shared_ptr<torch::jit::Graph>& graph) {
  static const std::set<std::string> passthrough = {"aten::max_pool2d", "aten::avg_pool2d", "aten::relu",
                                                    "aten::relu_",      "aten::hardtanh",   "aten::hardtanh_"};
  torch::jit::Value* self = graph->inputs().at(0);
  bool changed = false;
  std::vector<torch::jit::Node*> flattens;
  for (auto* n : graph->nodes())
    if (n->kind() == c10::Symbol::fromQualString("aten::flatten")) flattens.push_back(n);
  for (auto* flat : flattens) {
    auto start = torch::jit::toIValue(flat->input(1)), end = torch::jit::toIValue(flat->input(2));
    if (!start || !end || start->toInt() != 1 || end->toInt() != -1 || flat->output()->uses().size() != 1) continue;
    auto* linear = flat->output()->uses()[0].user;
    std::string lkind = linear->kind().toQualString();
    if ((lkind != "quantized::linear" && lkind != "quantized::linear_relu") || linear->input(0) != flat->output())
      continue;
    auto* producer = flat->input(0)->node();
    while (passthrough.count(producer->kind().toQualString())) producer = producer->input(0)->node();
    std::string pkind = producer->kind().toQualString();
    if (pkind != "quantized::conv2d" && pkind != "quantized::conv2d_relu") continue;
    std::string conv_attr = packed_attribute(producer->input(1), self),
                lin_attr = packed_attribute(linear->input(1), self);
    if (conv_attr.empty() || lin_attr.empty()) continue;
    if (linear->input(1)->uses().size() != 1) continue;  // packed weight shared with another op
    int64_t channels = call_op("quantized::conv2d_unpack", {module.attr(conv_attr)}).at(0).toTensor().size(0);
    auto unpacked = call_op("quantized::linear_unpack", {module.attr(lin_attr)});
    torch::Tensor w = unpacked.at(0).toTensor();
    const int64_t out = w.size(0), k = w.size(1);
    if (k % channels != 0 || k == channels) continue;  // 1x1 spatial: flatten is a view already
    const int64_t spatial = k / channels;
    torch::Tensor ints = w.int_repr().view({out, channels, spatial}).transpose(1, 2).reshape({out, k}).contiguous();
    torch::Tensor permuted;
    if (w.qscheme() == c10::kPerChannelAffine || w.qscheme() == c10::kPerChannelSymmetric)
      permuted = at::_make_per_channel_quantized_tensor(ints, w.q_per_channel_scales(), w.q_per_channel_zero_points(),
                                                        w.q_per_channel_axis());
    else if (w.qscheme() == c10::kPerTensorAffine || w.qscheme() == c10::kPerTensorSymmetric)
      permuted = at::_make_per_tensor_quantized_tensor(ints, w.q_scale(), w.q_zero_point());
    else
      continue;
    auto repacked = call_op("quantized::linear_prepack", {permuted, unpacked.at(1)}).at(0);
    module.setattr(lin_attr, repacked);
    torch::jit::WithInsertPoint guard(flat);
    auto* dims = graph->insertConstant(std::vector<int64_t>{0, 2, 3, 1});
    auto* permute =
        graph->insertNode(graph->create(c10::Symbol::fromQualString("aten::permute"), {flat->input(0), dims}));
    permute->output()->setType(c10::TensorType::get());
    flat->replaceInput(0, permute->output());
    changed = true;
  }
  return changed;
}

// SiLU has no quantized kernel in this libtorch, so graph mode quantization leaves it a float island:
// dequantize -> silu -> quantize_per_tensor, three passes over the activation and two float copies of
// it (EfficientNet-B0 has 49). SiLU is x * sigmoid(x), and both halves have int8 kernels: aten::sigmoid
// on a quantized tensor (output scale 1/256, zero point 0) and quantized::mul, which requantizes to the
// scale and zero point the island's quantize_per_tensor was calibrated with. The sigmoid's 8-bit grid
// adds at most |x|/512 before that requantization. Islands whose float SiLU output has other users (the
// input of a squeeze-excitation block, pooled in float) stay as they are.
bool int8_silu(std::shared_ptr<torch::jit::Graph>& graph) {
  const auto quantize = c10::Symbol::fromQualString("aten::quantize_per_tensor");
  std::vector<torch::jit::Node*> targets;
  for (auto* n : graph->nodes()) {
    if (n->kind() != quantize || n->inputs().size() != 4) continue;
    auto dtype = torch::jit::toIValue(n->input(3));
    if (!dtype || !dtype->isInt() || dtype->toInt() != 13) continue;  // quint8 only
    auto* silu = n->input(0)->node();
    std::string kind = silu->kind().toQualString();
    if ((kind != "aten::silu" && kind != "aten::silu_") || silu->output()->uses().size() != 1) continue;
    auto* dequantize = silu->input(0)->node();
    if (dequantize->kind() != c10::Symbol::fromQualString("aten::dequantize") ||
        dequantize->output()->uses().size() != 1 || dequantize->inputs().size() != 1)
      continue;
    targets.push_back(n);
  }
  for (auto* n : targets) {
    auto* silu = n->input(0)->node();
    auto* dequantize = silu->input(0)->node();
    torch::jit::Value* quantized = dequantize->input(0);
    torch::jit::WithInsertPoint guard(n);
    auto* sigmoid = graph->insertNode(graph->create(c10::Symbol::fromQualString("aten::sigmoid"), {quantized}));
    sigmoid->output()->setType(c10::TensorType::get());
    auto* mul = graph->insertNode(graph->create(c10::Symbol::fromQualString("quantized::mul"),
                                                {quantized, sigmoid->output(), n->input(1), n->input(2)}));
    mul->output()->setType(n->output()->type());
    mul->copyMetadata(silu);
    n->output()->replaceAllUsesWith(mul->output());
    n->destroy();
    silu->destroy();
    dequantize->destroy();
  }
  return !targets.empty();
}

// ReLU6 after an int8 convolution, as MobileNetV2 has it 35 times, is a separate aten::hardtanh_ pass
// over the activation in quantize_jit's graph (about 8% of MobileNetV2's int8 time at batch 1). A
// quantized output already saturates at 255, so the clamp is free when the output range [0, upper] is
// chosen to end where the clamp does: conv2d -> hardtanh(0, M) becomes conv2d_relu with zero point 0
// and scale upper / 255, upper = min(M, the largest value the old parameters could represent). Where the
// old output already had zero point 0 and ended at or below M the result is bit-identical; otherwise the
// values in [0, upper] get a finer grid than before (the old one spent its codes on negatives the clamp
// discarded). Zero point 0 is required, not a choice: onednn's fused ReLU ignores a nonzero output zero
// point (this libtorch's quantized::conv2d_relu with zero point 100 returns the plain convolution).
bool fold_relu6_into_int8_layers(std::shared_ptr<torch::jit::Graph>& graph) {
  static const std::map<std::string, std::string> fused = {{"quantized::conv2d", "quantized::conv2d_relu"},
                                                           {"quantized::conv2d_relu", "quantized::conv2d_relu"},
                                                           {"quantized::linear", "quantized::linear_relu"},
                                                           {"quantized::linear_relu", "quantized::linear_relu"}};
  std::vector<torch::jit::Node*> clamps;
  for (auto* n : graph->nodes()) {
    std::string kind = n->kind().toQualString();
    if ((kind == "aten::hardtanh_" || kind == "aten::hardtanh") && n->inputs().size() == 3) clamps.push_back(n);
  }
  bool changed = false;
  for (auto* clamp : clamps) {
    auto* layer = clamp->input(0)->node();
    auto target = fused.find(layer->kind().toQualString());
    if (target == fused.end() || layer->inputs().size() != 4 || clamp->input(0)->uses().size() != 1) continue;
    auto low = torch::jit::toIValue(clamp->input(1)), high = torch::jit::toIValue(clamp->input(2));
    auto scale = torch::jit::toIValue(layer->input(2)), zero_point = torch::jit::toIValue(layer->input(3));
    if (!low || !high || !scale || !zero_point || !low->isDouble() || !high->isDouble() || !scale->isDouble() ||
        !zero_point->isInt() || low->toDouble() != 0.0 || high->toDouble() <= 0.0)
      continue;
    const double old_scale = scale->toDouble();
    const int64_t old_zero = zero_point->toInt();
    if (old_zero < 0 || old_zero >= 255) continue;
    // The clamp's upper code as aten's quantized clamp computes it (float reciprocal, round to even).
    const double clamp_code = old_zero + std::nearbyint(high->toDouble() * (1.0f / static_cast<float>(old_scale)));
    const bool exact = old_zero == 0 && clamp_code >= 255;
    const double upper = std::min(high->toDouble(), (255 - old_zero) * old_scale);
    torch::jit::WithInsertPoint guard(layer);
    auto* node = graph->insertNode(graph->create(c10::Symbol::fromQualString(target->second),
                                                 {layer->input(0), layer->input(1),
                                                  exact ? layer->input(2) : graph->insertConstant(upper / 255.0),
                                                  graph->insertConstant(int64_t{0})}));
    node->output()->setType(clamp->output()->type());
    node->copyMetadata(layer);
    clamp->output()->replaceAllUsesWith(node->output());
    clamp->destroy();
    layer->destroy();
    changed = true;
  }
  return changed;
}

}  // namespace

torch::jit::Stack call_op(const char* name, torch::jit::Stack stack) {
  auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
  op.callBoxed(&stack);
  return stack;
}

std::string packed_attribute(torch::jit::Value* v, torch::jit::Value* self) {
  auto* n = v->node();
  if (n->kind() != c10::prim::GetAttr || n->input(0) != self) return {};
  return n->s(c10::attr::name);
}

std::vector<std::string> optimize_int8_graph(torch::jit::Module& module) {
  std::vector<std::string> applied;
  auto graph = module.get_method("forward").graph();
  if (has_dropout(graph)) {
    torch::jit::removeDropout(graph);
    if (!has_dropout(graph)) applied.push_back("remove-dropout");
  }
  // int8_silu reads the islands' quantize_per_tensor nodes and vectorized_dequantize their producers'
  // kinds, so both run before vectorized_quantize replaces those nodes.
  if (int8_silu(graph)) applied.push_back("int8-silu");
  if (vectorized_dequantize(graph)) applied.push_back("vectorized-dequantize");
  if (vectorized_quantize(graph)) applied.push_back("vectorized-quantize");
  if (flatten_channels_last(module, graph)) applied.push_back("flatten-channels-last");
  if (fold_relu6_into_int8_layers(graph)) applied.push_back("fold-relu6");
  torch::jit::ConstantPropagation(graph);
  torch::jit::EliminateDeadCode(graph);
  return applied;
}

namespace {

// A tensor element of a returned tuple may come out of a float layer, or be an integer index (argmax):
// only quantized ones are dequantized.
const char* kDequantizeIfQuantizedSource = R"JIT(
def lite_dequantize_if_quantized(x: Tensor) -> Tensor:
    if x.is_quantized:
        return x.dequantize()
    return x
)JIT";

void collect_tuple_dequantizes(torch::jit::Block* block, std::vector<torch::jit::Node*>& out) {
  for (auto* n : block->nodes()) {
    for (auto* b : n->blocks()) collect_tuple_dequantizes(b, out);
    if (n->kind() == c10::Symbol::fromQualString("aten::dequantize") && n->inputs().size() == 1 &&
        n->input(0)->type()->cast<c10::TupleType>())
      out.push_back(n);
  }
}

}  // namespace

int dequantize_tuple_elements(torch::jit::Graph& graph) {
  std::vector<torch::jit::Node*> targets;
  collect_tuple_dequantizes(graph.block(), targets);
  for (auto* n : targets) {
    auto tuple_type = n->input(0)->type()->expect<c10::TupleType>();
    torch::jit::WithInsertPoint guard(n);
    std::vector<torch::jit::Value*> elements;
    auto* producer = n->input(0)->node();
    if (producer->kind() == c10::prim::TupleConstruct) {
      elements.assign(producer->inputs().begin(), producer->inputs().end());
    } else {
      auto* unpack = graph.insertNode(graph.createTupleUnpack(n->input(0)));
      elements.assign(unpack->outputs().begin(), unpack->outputs().end());
    }
    for (auto& e : elements)
      if (e->type()->cast<c10::TensorType>())
        e = insert_function(graph, n, kDequantizeIfQuantizedSource, "lite_dequantize_if_quantized", {e}).at(0);
    auto* rebuilt = graph.insertNode(graph.createTuple(elements, tuple_type->schema() ? tuple_type : nullptr));
    rebuilt->output()->setType(tuple_type);
    n->output()->replaceAllUsesWith(rebuilt->output());
    n->destroy();
  }
  return static_cast<int>(targets.size());
}

}  // namespace lite::quantize

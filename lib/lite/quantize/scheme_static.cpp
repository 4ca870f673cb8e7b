// Static int8: PyTorch's graph-mode post-training quantization (the C++ passes behind Python's
// torch.ao.quantization.quantize_jit), driven from C++ with lite's observers, then lite's own passes.
//   1. FoldConvBatchNorm: BN folded into the preceding convolution's weight and bias; when InsertObservers
//      rejects an `if` of the model as given, the model is first specialized for inference (specialize.cpp:
//      training-only branches dropped, modules with branches on data kept float);
//   2. InsertObservers: an activation observer on every value a quantized op reads or writes, a weight
//      observer on every weight (int8, symmetric, per output channel on onednn, per tensor on qnnpack);
//   3. calibration: the --calib batches run through the observed float model; the chosen method turns
//      the statistics into scales and zero points (Calibrator);
//   4. InsertQuantDeQuant, Finalize: quantize/dequantize pairs, then fusion into quantized::conv2d_relu,
//      quantized::linear_relu, quantized::add_relu, ..., packed weights, freezing;
//   5. optimize_int8_graph: dropout removed, a vectorized input quantization for large inputs, ...
// Layers the plan keeps in float get no qconfig and stay aten ops between dequantize and quantize.
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/fold_conv_bn.h>
#include <torch/csrc/jit/passes/quantization/finalize.h>
#include <torch/csrc/jit/passes/quantization/insert_observers.h>
#include <torch/csrc/jit/passes/quantization/insert_quant_dequant.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <type_traits>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/model/fused_paths.hpp"
#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

std::unordered_map<std::string, c10::optional<QConfigPair>> make_qconfig_dict(
    const Plan& plan, const QConfigPair& qconfig, const std::vector<std::string>& per_tensor,
    const std::optional<QConfigPair>& per_tensor_qconfig) {
  std::unordered_map<std::string, c10::optional<QConfigPair>> dict;
  bool any_float = false, any_quantized = false;
  for (const auto& l : plan.layers) (l.quantized ? any_quantized : any_float) = true;
  if (!any_quantized) throw InternalError("plan quantizes no layer");
  dict[""] = qconfig;
  if (per_tensor_qconfig)
    for (const auto& name : per_tensor) dict[name] = *per_tensor_qconfig;
  for (const auto& l : plan.layers)
    if (any_float && !l.quantized) dict[l.layer.name] = c10::nullopt;
  return dict;
}

namespace {

using Clock = std::chrono::steady_clock;

// Times one step of a build into ctx.steps.
template <class F>
auto timed_step(BuildContext& ctx, const char* name, F&& f) {
  auto start = Clock::now();
  auto record = [&] { ctx.steps.emplace_back(name, std::chrono::duration<double>(Clock::now() - start).count()); };
  if constexpr (std::is_void_v<decltype(f())>) {
    f();
    record();
  } else {
    auto out = f();
    record();
    return out;
  }
}

// The plan's qconfig dict, with per-tensor weights for the transposed convolutions when `qconfig`'s are per
// channel (libtorch: "Per Channel Quantization is currently disabled for transposed conv").
// Every nn.MultiheadAttention stays out of graph mode (its out_proj with it), whatever the plan and whether a layer
// names it or not (a traced one's in_proj is split before its linears read it): graph mode's passes cannot reach
// its projections, and observers on its list-valued branches fail when its self- and cross-attention paths are
// both observed. Planned ones become dynamic int8 after Finalize (dynamic_attention.cpp).
std::unordered_map<std::string, c10::optional<QConfigPair>> qconfig_dict(BuildContext& ctx, const QConfigPair& qconfig) {
  auto dict = [&] {
    if (ctx.plan.engine == "qnnpack") return make_qconfig_dict(ctx.plan, qconfig);
    const auto transposed = transposed_conv_modules(ctx.source.module);
    if (!transposed.empty()) ctx.details["per_tensor_weights"] = transposed;
    return make_qconfig_dict(ctx.plan, qconfig, transposed,
                             QConfigPair{std::get<0>(qconfig).clone(), make_weight_observer(false)});
  }();
  for (const auto& name : multihead_attention_modules(ctx.source.module)) dict[name] = c10::nullopt;
  return dict;
}

// InsertObservers, keeping float every module that holds an `if` it cannot observe consistently (a branch
// on data that eval specialization could not remove), retried until it passes. Throws InputError naming
// the construct when the `if` sits in the model's own forward (nothing would be left to quantize).
torch::jit::Module insert_observers(BuildContext& ctx, torch::jit::Module& m, torch::jit::QuantType type,
                                    const QConfigPair& qconfig) {
  for (;;) {
    auto dict = qconfig_dict(ctx, qconfig);
    for (const auto& r : ctx.float_regions) dict[r.module] = c10::nullopt;
    try {
      return torch::jit::InsertObservers(m, "forward", dict, /*inplace=*/false,
                                         type);
    } catch (const c10::Error& e) {
      const std::string where = rejected_if_location(e.what());
      if (where.empty()) throw;
      size_t added = 0;
      for (auto& region : isolate_if(m, where)) {
        if (region.module.empty())  // the root would be the float region: every layer kept float
          throw InputError(ctx.source.path.string(),
                           "int8 quantization cannot go through the `if` at " + where +
                               " in the model's own forward (its branches depend on data): keeping the "
                               "module that holds it float would keep all " +
                               std::to_string(ctx.plan.layers.size()) + " layers float",
                           "move the branch into a submodule (only its layers then stay float), or try another "
                           "{mode} (dynamic, fp16, bf16)");
        bool known = std::any_of(ctx.float_regions.begin(), ctx.float_regions.end(),
                                 [&](const FloatRegion& r) { return r.module == region.module; });
        if (!known) {
          ctx.float_regions.push_back(region);
          ++added;
        }
      }
      if (added == 0)
        throw InputError(ctx.source.path.string(),
                         "int8 quantization cannot go through the `if` at " + where + ": its branches depend on data",
                         "try another {mode} (dynamic, fp16, bf16), or move the branch into a submodule of its own");
    }
  }
}

// InsertObservers on the model as it is (the graph PyTorch's quantize_jit would see, so its result is the
// same), or nullopt when the pass rejects an `if` (a training-only branch, or one on data).
std::optional<torch::jit::Module> try_insert_observers(BuildContext& ctx, torch::jit::Module& m,
                                                       torch::jit::QuantType type, const QConfigPair& qconfig) {
  try {
    return torch::jit::InsertObservers(m, "forward", qconfig_dict(ctx, qconfig), /*inplace=*/false, type);
  } catch (const c10::Error& e) {
    if (rejected_if_location(e.what()).empty()) throw;
    return std::nullopt;
  }
}

// The observed module: the model as given when InsertObservers takes it; otherwise the model specialized
// for inference (specialize.cpp), with float regions for the branches that still depend on data.
torch::jit::Module observed_module(BuildContext& ctx, torch::jit::QuantType type, const QConfigPair& qconfig) {
  auto fresh_clone = [&] {
    return timed_step(ctx, "clone", [&] {
      torch::jit::Module clone = ctx.source.module.clone();
      clone.eval();
      // nn.TransformerEncoderLayer's and nn.MultiheadAttention's fused fast paths read the float weights
      // whatever the passes do to the layers: the clone takes the unfused layers, which int8 reaches.
      if (int n = model::prefer_unfused_paths(clone, model::transformer_fused_ops()))
        ctx.details["unfused_transformer_paths"] = n;
      return clone;
    });
  };
  if (ctx.float_regions.empty()) {  // an earlier build that needed regions needed specialization too
    torch::jit::Module plain = fresh_clone();
    plain = timed_step(ctx, "fold-bn", [&] { return torch::jit::FoldConvBatchNorm(plain); });
    auto observed = timed_step(ctx, "insert-observers", [&] { return try_insert_observers(ctx, plain, type, qconfig); });
    if (observed) {
      ctx.details["specialized_graphs"] = 0;
      return *observed;
    }
  }
  torch::jit::Module m = fresh_clone();
  ctx.details["specialized_graphs"] = timed_step(ctx, "specialize", [&] { return specialize_for_inference(m); });
  m = timed_step(ctx, "fold-bn", [&] { return torch::jit::FoldConvBatchNorm(m); });
  return timed_step(ctx, "insert-observers", [&] { return insert_observers(ctx, m, type, qconfig); });
}

// The weights of the planned nn.MultiheadAttention layers, by layer name, as `module` holds them (Finalize
// freezes the module without copying its tensors, so the frozen graph's constants are these or views of them).
// The layers are found in the source's graphs: eval specialization may have rewritten `module`'s.
std::map<std::string, torch::Tensor> planned_attention_weights(const Plan& plan, const torch::jit::Module& source,
                                                               const torch::jit::Module& module) {
  std::map<std::string, torch::Tensor> out;
  bool any = false;
  for (const auto& l : plan.layers) any = any || (l.quantized && l.layer.in_multihead_attention);
  if (!any) return out;
  const auto weights = layer_weights(source, module);
  for (const auto& l : plan.layers)
    if (l.quantized && l.layer.in_multihead_attention && weights.count(l.layer.name))
      out[l.layer.name] = weights.at(l.layer.name);
  return out;
}

// Dynamic int8 for the planned attention projections of the finalized model; a planned one the frozen graph
// does not compute as a linear of its weight (a traced fused attention) stays float, and a note names it.
void convert_attention(BuildContext& ctx, torch::jit::Module& q, const std::map<std::string, torch::Tensor>& planned) {
  const auto converted = quantize_attention_dynamic(q, planned);
  ctx.details["attention_projections_int8"] = converted;
  std::vector<std::string> left;
  for (const auto& [name, weight] : planned)
    if (std::find(converted.begin(), converted.end(), name) == converted.end()) left.push_back(name);
  if (!left.empty())
    ctx.notes.push_back("planned attention projections that stayed float (the frozen graph computes them in a "
                        "fused op, not as linears of their weights): " + join(left, ", "));
}

}  // namespace

torch::jit::Module graph_mode_int8(BuildContext& ctx, torch::jit::QuantType type,
                                   const std::function<void(torch::jit::Module& observed)>& calibrate) {
  torch::NoGradGuard no_grad;
  const bool per_channel = ctx.plan.engine != "qnnpack";
  QConfigPair qconfig{make_activation_observer(), make_weight_observer(per_channel)};
  torch::jit::Module observed = observed_module(ctx, type, qconfig);
  if (calibrate) timed_step(ctx, "calibrate", [&] { calibrate(observed); });
  observed = timed_step(ctx, "insert-quant-dequant", [&] {
    return torch::jit::InsertQuantDeQuant(observed, "forward", /*inplace=*/true, /*debug=*/false, type);
  });
  ctx.details["weights"] = per_channel ? "int8 symmetric, per output channel" : "int8 symmetric, per tensor";
  if (ctx.details.contains("per_tensor_weights"))
    ctx.notes.push_back("transposed convolutions (" + join(ctx.details["per_tensor_weights"].get<std::vector<std::string>>(), ", ") +
                        ") are int8 with per-tensor weights: libtorch has no per-channel transposed convolution");
  if (!ctx.float_regions.empty()) ctx.details["float_regions"] = ctx.float_regions;
  const auto attention = planned_attention_weights(ctx.plan, ctx.source.module, observed);
  torch::jit::Module q = timed_step(ctx, "finalize", [&] { return torch::jit::Finalize(observed, type, {}); });
  if (!attention.empty()) timed_step(ctx, "attention-int8", [&] { convert_attention(ctx, q, attention); });
  // The forward keeps its declared return type (a named tuple stays one when the file is loaded back).
  if (int n = dequantize_tuple_elements(*q.get_method("forward").graph())) ctx.details["tuple_outputs_dequantized"] = n;
  return q;
}

uint64_t int8_layer_bytes(const LayerInfo& l) {
  uint64_t channels = l.weight_shape.empty() ? 1 : static_cast<uint64_t>(l.weight_shape[0]);
  return l.weight_elements() + channels * 12 + 4 * static_cast<uint64_t>(l.bias);
}

std::string small_layer_reason(const LayerInfo& l) {
  if (l.kind != "Linear" || l.weight_elements() >= kSmallLayerMacs) return {};
  return "small: " + std::to_string(l.weight_elements()) + " MACs per sample, below what an int8 call costs";
}

int64_t count_quantized_ops(const torch::jit::Module& module) {
  int64_t n = 0;
  std::function<void(torch::jit::Block*)> walk = [&](torch::jit::Block* b) {
    for (auto* node : b->nodes()) {
      for (auto* sub : node->blocks()) walk(sub);
      std::string kind = node->kind().toQualString();
      if (kind.rfind("quantized::conv", 0) == 0 || kind.rfind("quantized::linear", 0) == 0) {
        if (kind.find("prepack") == std::string::npos && kind.find("unpack") == std::string::npos) ++n;
      }
    }
  };
  walk(module.get_method("forward").graph()->block());
  return n;
}

namespace {

class StaticScheme final : public Scheme {
 public:
  std::string layer_scheme(const LayerInfo& l) const override {
    // No observer sees attention's projections (graph mode cannot reach them): they are dynamic int8 here.
    if (l.in_multihead_attention) return "int8 dynamic in attention (int8 weights, activations quantized per call)";
    // libtorch has no per-channel transposed convolution: those weights take one scale (qconfig_dict)
    if (l.kind.rfind("ConvTranspose", 0) == 0) return "int8 static (int8 weights per tensor, uint8 activations)";
    if (l.kind.rfind("Conv", 0) == 0 || l.kind == "Linear") return "int8 static (int8 weights, uint8 activations)";
    return {};
  }
  std::string keep_float_reason(const LayerInfo& l) const override { return small_layer_reason(l); }
  uint64_t layer_bytes(const LayerInfo& l) const override { return int8_layer_bytes(l); }
  bool needs_calibration() const override { return true; }

  void build(BuildContext& ctx) const override {
    if (!ctx.calibrator) throw InternalError("static mode built without calibration");
    torch::NoGradGuard no_grad;
    torch::jit::Module q = graph_mode_int8(ctx, torch::jit::QuantType::STATIC,
                                           [&](torch::jit::Module& observed) { ctx.calibrator->calibrate(observed); });
    auto passes = timed_step(ctx, "lite-passes", [&] {
      auto graph = q.get_method("forward").graph();
      torch::jit::ConstantPropagation(graph);
      torch::jit::EliminateDeadCode(graph);
      return optimize_int8_graph(q);
    });
    if (int tables = quantize_embedding_tables(q)) ctx.details["embedding_tables_int8"] = tables;
    ctx.details["activations"] = "uint8 affine, per tensor";
    ctx.details["quantized_ops"] = count_quantized_ops(q);
    ctx.details["lite_passes"] = passes;
    ctx.result = q;
  }
};

}  // namespace

const Scheme& static_scheme() {
  static const StaticScheme scheme;
  return scheme;
}

}  // namespace lite::quantize

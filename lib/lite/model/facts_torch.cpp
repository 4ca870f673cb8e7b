#include "lite/model/facts_torch.hpp"

#include <ATen/native/quantized/PackedParams.h>
#include <ATen/record_function.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <unordered_set>

#include "lite/model/inputs.hpp"

namespace lite::model {

namespace {

// Collects every tensor reachable from an IValue, including the weights inside quantized packed
// parameter objects (reached through their __getstate__ method).
struct TensorCollector {
  std::unordered_set<const void*> seen;
  ModelFacts& facts;
  bool count_as_parameters = true;

  void add(const torch::Tensor& t) {
    if (!t.defined() || !t.has_storage()) return;
    const void* key = t.storage().data();
    if (t.numel() == 0 || !seen.insert(key).second) return;
    facts.tensor_bytes += t.numel() * t.element_size();
    facts.elements_by_dtype[dtype_name(t.scalar_type())] += t.numel();
    if (count_as_parameters) facts.parameters += t.numel();
  }

  void visit(const c10::IValue& v, int depth = 0) {
    if (depth > 8) return;
    if (v.isTensor()) {
      add(v.toTensor());
    } else if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) visit(e, depth + 1);
    } else if (v.isList()) {
      for (const auto& e : v.toListRef()) visit(e, depth + 1);
    } else if (v.isGenericDict()) {
      for (const auto& item : v.toGenericDict()) visit(item.value(), depth + 1);
    } else if (v.isObject()) {
      auto obj = v.toObject();
      // Packed parameters of quantized ops and other custom classes expose their tensors via __getstate__.
      if (auto* getstate = obj->type()->findMethod("__getstate__")) {
        try {
          visit((*getstate)({v}), depth + 1);
        } catch (const std::exception&) {
        }
      }
    }
  }
};

void visit_graph_constants(torch::jit::Block* block, TensorCollector& c) {
  for (auto* node : block->nodes()) {
    if (node->kind() == c10::prim::Constant && node->hasAttribute(c10::attr::value)) {
      auto v = torch::jit::toIValue(node->output());
      if (v) c.visit(*v);
    }
    for (auto* sub : node->blocks()) visit_graph_constants(sub, c);
  }
}

bool is_mac_op(const std::string& name) {
  static const std::unordered_set<std::string> ops = {
      "aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution", "aten::_convolution",
      "aten::conv_transpose2d", "aten::mkldnn_convolution", "aten::linear", "aten::matmul", "aten::mm",
      "aten::bmm", "aten::addmm", "aten::baddbmm",
      "quantized::conv2d", "quantized::conv2d_relu", "quantized::conv2d_add", "quantized::conv2d_add_relu",
      "quantized::linear", "quantized::linear_relu", "quantized::linear_dynamic", "quantized::linear_relu_dynamic",
      "quantized::linear_dynamic_fp16", "prepacked::conv2d_clamp_run", "prepacked::linear_clamp_run"};
  return ops.count(name) > 0;
}

uint64_t numel_of(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (auto d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

// Weight shape and groups of a conv/linear op from its second argument (tensor or packed params).
bool weight_of(const c10::IValue& arg, std::vector<int64_t>& shape, int64_t& groups) {
  groups = 1;
  if (arg.isTensor()) {
    shape = arg.toTensor().sizes().vec();
    return true;
  }
  if (!arg.isCustomClass()) return false;
  try {
    if (auto conv = arg.toCustomClass<ConvPackedParamsBase<2>>()) {
      shape = std::get<0>(conv->unpack()).sizes().vec();
      groups = conv->groups();
      return true;
    }
  } catch (const c10::Error&) {
  }
  try {
    if (auto lin = arg.toCustomClass<LinearPackedParamsBase>()) {
      shape = std::get<0>(lin->unpack()).sizes().vec();
      return true;
    }
  } catch (const c10::Error&) {
  }
  return false;
}

uint64_t count_macs(const std::string& op, const std::vector<c10::IValue>& in, const std::vector<int64_t>& out_shape) {
  uint64_t out = numel_of(out_shape);
  if (in.empty() || !in[0].isTensor()) return 0;
  auto x = in[0].toTensor().sizes().vec();
  std::vector<int64_t> w;
  int64_t groups = 1;
  bool conv = op.find("conv") != std::string::npos;
  bool linear = op.find("linear") != std::string::npos;
  if (conv || linear) {
    if (in.size() < 2 || !weight_of(in[1], w, groups)) return 0;
    if (conv) {
      if (op == "aten::conv1d" || op == "aten::conv2d" || op == "aten::conv3d") {
        if (in.size() > 6 && in[6].isInt()) groups = in[6].toInt();
      } else if (op == "aten::_convolution" || op == "aten::convolution") {
        if (in.size() > 8 && in[8].isInt()) groups = in[8].toInt();
      }
      // weight [Cout, Cin/groups, k...]: each output element needs Cin/groups * prod(k) MACs.
      uint64_t per_output = 1;
      for (size_t i = 1; i < w.size(); ++i) per_output *= static_cast<uint64_t>(w[i]);
      return out * per_output;
    }
    return out * static_cast<uint64_t>(w.back());  // linear: weight [out, in]
  }
  // matmul family: every output element is a dot product over the inner dimension.
  const c10::IValue& a = (op == "aten::addmm" || op == "aten::baddbmm") && in.size() > 1 ? in[1] : in[0];
  if (!a.isTensor() || a.toTensor().dim() == 0) return 0;
  return out * static_cast<uint64_t>(a.toTensor().size(-1));
}

struct MacContext : at::ObserverContext {
  LayerFacts layer;
  std::vector<c10::IValue> inputs;
  size_t returns = 1;  // how many of the outputs' stack are the op's own results
};

// A boxed call (the TorchScript interpreter's) hands the observer its whole stack as inputs and outputs: the
// caller's live values sit below the op's own, so in a loop or a method call `inputs()[0]` is not the op's first
// argument (FeaturePyramidNetwork's convs once read as 0 MACs). The op's own values are the stack's top `count`.
std::vector<c10::IValue> top_of_stack(c10::ArrayRef<const c10::IValue> stack, size_t count) {
  size_t skip = stack.size() > count ? stack.size() - count : 0;
  return std::vector<c10::IValue>(stack.begin() + static_cast<std::ptrdiff_t>(skip), stack.end());
}

thread_local int t_mac_depth = 0;
thread_local ModelFacts* t_facts = nullptr;

}  // namespace

void count_model_tensors(const torch::jit::Module& module, ModelFacts& facts) {
  TensorCollector c{{}, facts};
  for (const auto& p : module.named_parameters(/*recurse=*/true)) c.add(p.value);
  c.count_as_parameters = false;
  for (const auto& b : module.named_buffers(/*recurse=*/true)) c.add(b.value);
  // Everything else hanging off the module (packed params of quantized layers, frozen constants).
  c.count_as_parameters = true;
  for (const auto& a : module.named_attributes(/*recurse=*/true))
    if (!a.value.isModule()) c.visit(a.value);
  if (auto method = module.find_method("forward")) visit_graph_constants(method->graph()->block(), c);
}

ModelFacts measure_facts(LoadedModel& model, const std::vector<torch::Tensor>& inputs) {
  ModelFacts facts;
  facts.file_bytes = model.file_bytes;
  count_model_tensors(model.module, facts);
  if (!inputs.empty()) facts.measured_input_shape = inputs[0].sizes().vec();

  t_facts = &facts;
  t_mac_depth = 0;
  auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
            std::string name = fn.name();
            if (t_mac_depth > 0 || !is_mac_op(name)) return nullptr;
            ++t_mac_depth;
            auto ctx = std::make_unique<MacContext>();
            ctx->layer.op = name;
            auto schema = fn.operator_schema();
            ctx->inputs = schema ? top_of_stack(fn.inputs(), schema->arguments().size())
                                 : std::vector<c10::IValue>(fn.inputs().begin(), fn.inputs().end());
            ctx->returns = schema ? schema->returns().size() : 1;
            if (!ctx->inputs.empty() && ctx->inputs[0].isTensor()) ctx->layer.input_shape = ctx->inputs[0].toTensor().sizes().vec();
            std::tie(ctx->layer.module, ctx->layer.module_type) = module_from_hierarchy(torch::jit::currentModuleHierarchy());
            return ctx;
          },
          [](const at::RecordFunction& fn, at::ObserverContext* raw) {
            auto* ctx = static_cast<MacContext*>(raw);
            if (!ctx) return;
            --t_mac_depth;
            auto outs = top_of_stack(c10::ArrayRef<c10::IValue>(fn.outputs()), ctx->returns);
            if (!outs.empty() && outs[0].isTensor()) ctx->layer.output_shape = outs[0].toTensor().sizes().vec();
            ctx->layer.macs = count_macs(ctx->layer.op, ctx->inputs, ctx->layer.output_shape);
            t_facts->total_macs += ctx->layer.macs;
            t_facts->layers.push_back(std::move(ctx->layer));
            ctx->inputs.clear();
          })
          .needsInputs(true)
          .needsOutputs(true));
  try {
    torch::NoGradGuard no_grad;
    // On a clone, whose methods have executors of their own: the call is their first, a profiling run. From
    // a method's second call on, this libtorch records some ops' inputs one stack slot too low (ConvNeXt's
    // `layer_scale * block(x)`: the depthwise conv read as [C, 1, 1] x [1, C, H, W], a sixth of its MACs).
    torch::jit::Module fresh = model.module.clone(/*inplace=*/true);
    run_forward(fresh, inputs, model.path);
  } catch (...) {
    at::removeCallback(handle);
    t_facts = nullptr;
    throw;
  }
  at::removeCallback(handle);
  t_facts = nullptr;
  return facts;
}

}  // namespace lite::model

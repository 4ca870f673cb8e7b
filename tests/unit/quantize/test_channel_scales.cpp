// move_channel_scales_out (dynamic_channel_scales.cpp): per-channel dynamic int8 linears become int8 values of
// scale 1 with the scales and bias applied after the kernel, giving the same outputs; other weights are left alone.
#include <doctest/doctest.h>
#include <torch/script.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include "lite/quantize/quantize_internal.hpp"

using namespace lite::quantize;

namespace {

c10::IValue packed_linear(const torch::Tensor& w, const torch::Tensor& bias, bool per_channel) {
  torch::Tensor q;
  if (per_channel) {
    const torch::Tensor scales = (w.abs().amax(1) / 127).to(torch::kDouble);
    q = at::quantize_per_channel(w, scales, torch::zeros({w.size(0)}, torch::kLong), 0, torch::kQInt8);
  } else {
    q = at::quantize_per_tensor(w, w.abs().max().item<double>() / 127, 0, torch::kQInt8);
  }
  return call_op("quantized::linear_prepack", {q, bias.defined() ? c10::IValue(bias) : c10::IValue()}).at(0);
}

// A 16 -> 32 -> 8 stack of dynamic int8 linears read from attributes, the second without a bias (a tied head's form).
torch::jit::Module two_linears(bool per_channel) {
  torch::manual_seed(7);
  torch::jit::Module m("TwoLinears");
  const c10::IValue first = packed_linear(torch::randn({32, 16}) * 0.3, torch::randn({32}) * 0.1, per_channel);
  const c10::IValue second = packed_linear(torch::randn({8, 32}) * 0.2, torch::Tensor(), per_channel);
  m.register_attribute("first", first.type(), first);
  m.register_attribute("second", second.type(), second);
  m.define("def forward(self, x):\n    return x\n");
  // The ops by hand: a C++ define resolves no torch.ops namespaces.
  auto graph = m.get_method("forward").graph();
  const c10::Symbol linear = c10::Symbol::fromQualString("quantized::linear_dynamic");
  torch::jit::WithInsertPoint guard(graph->return_node());
  torch::jit::Value* self = graph->inputs().at(0);
  torch::jit::Value* h = graph->insert(linear, {graph->inputs().at(1), graph->insertGetAttr(self, "first"), true});
  torch::jit::Value* relu = graph->insert(c10::aten::relu, {h});
  graph->return_node()->replaceInput(0, graph->insert(linear, {relu, graph->insertGetAttr(self, "second"), true}));
  return m;
}

torch::Tensor output_of(torch::jit::Module& m, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  return m.forward({x}).toTensor();
}

}  // namespace

TEST_CASE("per-channel dynamic linears get their scales after the kernel: same outputs, int8 values of scale 1") {
  at::globalContext().setQEngine(at::QEngine::ONEDNN);
  torch::jit::Module reference = two_linears(true);
  torch::jit::Module moved = two_linears(true);
  CHECK(move_channel_scales_out(moved) == 2);
  for (int64_t rows : {1, 5}) {
    const torch::Tensor x = torch::randn({1, rows, 16});
    const torch::Tensor want = output_of(reference, x), got = output_of(moved, x);
    REQUIRE(got.sizes() == want.sizes());
    CHECK(torch::allclose(got, want, /*rtol=*/1e-5, /*atol=*/1e-6));
  }
  for (const char* name : {"first", "second"}) {
    const torch::Tensor w = call_op("quantized::linear_unpack", {moved.attr(name)}).at(0).toTensor();
    CHECK((w.qscheme() == c10::kPerTensorAffine));
    CHECK(w.q_scale() == 1.0);
  }
  const std::string code = moved.get_method("forward").graph()->toString();
  CHECK(code.find("aten::mul_") != std::string::npos);
  CHECK(code.find("aten::add_") != std::string::npos);
}

TEST_CASE("per-tensor dynamic linears are left as they are") {
  at::globalContext().setQEngine(at::QEngine::ONEDNN);
  torch::jit::Module m = two_linears(false);
  const std::string before = m.get_method("forward").graph()->toString();
  CHECK(move_channel_scales_out(m) == 0);
  CHECK(m.get_method("forward").graph()->toString() == before);
}

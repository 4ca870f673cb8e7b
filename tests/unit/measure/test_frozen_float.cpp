// The frozen float baseline (measure::frozen_float): optimize_for_inference kept where it agrees with the model,
// freezing alone where PyTorch 1.13 miscompiles it; and the discrepancy measure behind that check.
#include <doctest/doctest.h>
#include <torch/script.h>

#include <cmath>
#include <limits>

#include "lite/measure/frozen_float.hpp"

using namespace lite::measure;

TEST_CASE("output_discrepancy: the largest difference over the largest magnitude, through containers") {
  auto a = torch::tensor({1.0, -4.0, 2.0});
  CHECK(output_discrepancy(a, a.clone()) == 0);
  CHECK(output_discrepancy(a, torch::tensor({1.0, -4.0, 3.0})) == doctest::Approx(0.25));
  CHECK(std::isinf(output_discrepancy(a, torch::tensor({1.0, -4.0}))));  // shapes differ
  auto tuple = [](std::vector<c10::IValue> v) { return c10::IValue(c10::ivalue::Tuple::create(std::move(v))); };
  auto b = torch::tensor({10.0, 10.0});
  CHECK(output_discrepancy(tuple({a, c10::IValue(), b}), tuple({a, c10::IValue(), torch::tensor({10.0, 9.0})})) ==
        doctest::Approx(0.1));  // the worst element; None agrees with None
  CHECK(std::isinf(output_discrepancy(tuple({a, b}), tuple({a}))));
  CHECK(std::isinf(output_discrepancy(tuple({a}), a)));
  c10::Dict<std::string, torch::Tensor> d1, d2;
  d1.insert("logits", a);
  d2.insert("logits", a * 2);
  CHECK(output_discrepancy(c10::IValue(d1), c10::IValue(d2)) == doctest::Approx(1.0));
  auto nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(output_discrepancy(torch::tensor({nan, 1.0}), torch::tensor({nan, 1.0})) == 0);
  CHECK(std::isinf(output_discrepancy(torch::tensor({nan, 1.0}), torch::tensor({0.0, 1.0}))));
  CHECK(output_discrepancy(torch::zeros({3}), torch::full({3}, 1e-4)) == doctest::Approx(1e-4));  // zero reference
}

TEST_CASE("frozen_float falls back to freezing alone where optimize_for_inference miscomputes") {
  // PyTorch 1.13: optimize_for_inference's graph for a convolution with 24 output channels followed by
  // hardswish computes other outputs than the model (relative error about 0.4); with 16 channels it agrees.
  auto net = [](int64_t channels) {
    torch::manual_seed(3);
    torch::jit::Module m{c10::QualifiedName("__torch__.lite.test.ConvHardswish" + std::to_string(channels))};
    m.register_attribute("training", c10::BoolType::get(), true);
    m.register_parameter("w", torch::randn({channels, 3, 3, 3}), /*is_buffer=*/false);
    m.register_parameter("b", torch::randn({channels}), /*is_buffer=*/false);
    m.define(R"JIT(
def forward(self, x: Tensor) -> Tensor:
    return torch.hardswish(torch.conv2d(x, self.w, self.b, [1, 1], [1, 1], [1, 1], 1))
)JIT");
    m.eval();
    return m;
  };
  const std::vector<torch::Tensor> sample = {torch::randn({1, 3, 8, 8})};
  torch::NoGradGuard no_grad;

  auto broken = net(24);
  FrozenFloat f = frozen_float(broken, sample);
  CHECK(f.optimized_error > kOptimizeForInferenceTolerance);
  CHECK(f.note.find("torch::jit::freeze alone") != std::string::npos);
  CHECK(f.note.find("optimize_for_inference changed this model's outputs") != std::string::npos);
  auto want = broken.forward({sample[0]}).toTensor();
  CHECK(output_discrepancy(want, f.module.forward({sample[0]})) <= kOptimizeForInferenceTolerance);

  auto fine = net(16);
  FrozenFloat g = frozen_float(fine, sample);
  CHECK(g.optimized_error <= kOptimizeForInferenceTolerance);
  CHECK(g.note.empty());

  CHECK(frozen_float(broken, {}).note.empty());  // no sample: no check
}

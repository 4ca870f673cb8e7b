#include <doctest/doctest.h>
#include <torch/script.h>

#include <chrono>

#include "../torch_fixtures.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/measure/timing.hpp"
#include "lite/model/load.hpp"

using namespace lite;

TEST_CASE("time_forward runs exactly the requested iterations after the warm-up") {
  auto m = model::load_model(test::bundled_model());
  measure::TimingOptions o;
  o.warmup = 3;
  o.iterations = 7;
  auto s = measure::time_forward(m.module, {torch::zeros({1, 1, 28, 28})}, o, m.path, no_progress());
  CHECK(s.warmup_ms.size() == 3);
  CHECK(s.ms.size() == 7);
  for (double x : s.ms) CHECK(x > 0);
}

TEST_CASE("duration mode honours the minimum iteration count") {
  auto m = model::load_model(test::bundled_model());
  measure::TimingOptions o;
  o.warmup = 0;
  o.duration_s = 1e-6;
  o.min_iterations = 4;
  auto s = measure::time_forward(m.module, {torch::zeros({1, 1, 28, 28})}, o, m.path, no_progress());
  CHECK(s.ms.size() == 4);
}

TEST_CASE("interleaved timing gives both models the same number of samples") {
  auto a = model::load_model(test::bundled_model());
  auto b = model::load_model(test::bundled_model());
  measure::TimingOptions o;
  o.warmup = 2;
  o.iterations = 6;
  auto [sa, sb] = measure::time_interleaved(a.module, a.path, b.module, b.path, {torch::zeros({1, 1, 28, 28})}, o,
                                            no_progress());
  CHECK(sa.ms.size() == 6);
  CHECK(sb.ms.size() == 6);
}

TEST_CASE("interleaved timing with settle_width stops once the ratio is decided") {
  // A: forty 64x64 matmuls; B: one. Their ratio is about 40 and the interval lies far above 1 after a few calls,
  // so the loop stops long before its 60 s duration. Every tensor here is 16 KiB, so the allocator never maps
  // fresh pages: with the bundled CNN at batch 64 as A, glibc's page faults made some calls 4x slower than
  // others, and beside other tests the interval sometimes stayed wide for the whole minute.
  torch::jit::Module chain{c10::QualifiedName("__torch__.lite.test.Chain")};
  chain.define(
      "def forward(self, x: Tensor) -> Tensor:\n"
      "    y = x\n"
      "    for _ in range(40):\n"
      "        y = torch.tanh(y.mm(x))\n"
      "    return y\n");
  torch::jit::Module single{c10::QualifiedName("__torch__.lite.test.Single")};
  single.define("def forward(self, x: Tensor) -> Tensor:\n    return torch.tanh(x.mm(x))\n");
  measure::TimingOptions o;
  o.warmup = 20;
  o.duration_s = 60;
  o.min_iterations = 5;
  o.settle_width = 0.5;
  auto start = std::chrono::steady_clock::now();
  auto [sa, sb] = measure::time_interleaved(chain, "chain", single, "single", {torch::rand({64, 64}) * 0.1}, o,
                                            no_progress());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(50));
  CHECK(sa.ms.size() >= size_t(measure::kMinSettleCalls));
  CHECK(sa.ms.size() == sb.ms.size());
  // (whether the warm-up settled before its 20 calls depends on the machine's noise: not asserted)
  CHECK(sa.note.empty());           // no budget cut to report
}

TEST_CASE("a wrong input shape is an input error before any timing") {
  auto m = model::load_model(test::bundled_model());
  measure::TimingOptions o;
  o.iterations = 3;
  CHECK_THROWS_AS(measure::time_forward(m.module, {torch::zeros({1, 3, 28, 28})}, o, m.path, no_progress()), InputError);
}

TEST_CASE("an interrupt stops the loop with Interrupted") {
  auto m = model::load_model(test::bundled_model());
  measure::TimingOptions o;
  o.iterations = 1000000;
  request_interrupt_for_testing(true);
  CHECK_THROWS_AS(measure::time_forward(m.module, {torch::zeros({1, 1, 28, 28})}, o, m.path, no_progress()),
                  Interrupted);
  request_interrupt_for_testing(false);
}

TEST_CASE("under a budget a slow model gets the minimum calls and a note, with may_skip it is skipped") {
  auto m = model::load_model(test::bundled_model());
  measure::TimingOptions o;
  o.warmup = 50;
  o.duration_s = 100;  // far more than the budget allows
  o.min_iterations = 50;
  o.budget_s = 1e-6;   // every call overruns it
  auto s = measure::time_forward(m.module, {torch::zeros({1, 1, 28, 28})}, o, m.path, no_progress());
  CHECK(s.warmup_ms.size() == size_t(measure::kMinWarmup));
  CHECK(s.ms.size() == size_t(measure::kMinTimed));
  CHECK_FALSE(s.skipped);
  CHECK(s.note.find("measured with 2 warm-up and 3 timed calls instead of 50 and at least 50") == 0);
  CHECK(s.call_ms > 0);
  o.may_skip = true;
  auto skipped = measure::time_forward(m.module, {torch::zeros({1, 1, 28, 28})}, o, m.path, no_progress());
  CHECK(skipped.skipped);
  CHECK(skipped.ms.empty());
  CHECK(skipped.warmup_ms.size() == 1);
  CHECK(skipped.note.rfind("one call takes", 0) == 0);
}

TEST_CASE("a budget the model fits in changes nothing") {
  auto m = model::load_model(test::bundled_model());
  measure::TimingOptions o;
  o.warmup = 3;
  o.iterations = 7;
  o.budget_s = 1000;
  o.may_skip = true;
  auto s = measure::time_forward(m.module, {torch::zeros({1, 1, 28, 28})}, o, m.path, no_progress());
  CHECK(s.warmup_ms.size() == 3);
  CHECK(s.ms.size() == 7);
  CHECK(s.note.empty());
}

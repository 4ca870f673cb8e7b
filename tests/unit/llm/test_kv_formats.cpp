// The KV-cache what-if's formats (lite/llm/kv_formats.hpp) on hand-computed values: the fp8 e4m3 grid, int8's error
// bound, a second pass that changes nothing (what a cache re-read between steps needs), and the bytes a token takes.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>

#include "lite/llm/kv_formats.hpp"

using namespace lite;

namespace {
const llm::KvFormatEntry& format(const std::string& name) {
  for (const auto& f : llm::kv_formats())
    if (f.name == name) return f;
  FAIL("no KV format " << name);
  throw;
}
}  // namespace

TEST_CASE("fp8 e4m3 rounds to its grid, subnormals included") {
  // the row's maximum is 448, so its fp16 scale is exactly 1 and the values land on the e4m3 grid itself
  const auto x = torch::tensor({448.0f, 1.0f, 1.1f, 3.3f, 0.001f, -240.0f, -0.0f, 250.0f});
  const auto q = llm::quantize_dequantize(x, format("fp8"));
  // 1.1: step 1/8 -> 1.125; 3.3: step 1/4 -> 3.25; 0.001: subnormal step 2^-9; 250: step 16 -> 256
  const std::vector<float> want = {448, 1.0f, 1.125f, 3.25f, std::ldexp(1.0f, -9), -240, 0, 256};
  for (size_t i = 0; i < want.size(); ++i) CHECK(q[int64_t(i)].item<float>() == doctest::Approx(want[i]).epsilon(1e-7));
}

TEST_CASE("int8 keeps every value within half a step of its row's scale") {
  torch::manual_seed(3);
  const auto x = torch::randn({2, 4, 16, 64}) * torch::rand({2, 4, 16, 1}) * 10;
  const auto q = llm::quantize_dequantize(x, format("int8"));
  CHECK(q.sizes() == x.sizes());
  CHECK(bool(q.scalar_type() == torch::kFloat32));
  const auto step = x.abs().amax(-1, true) / 127;
  CHECK(((q - x).abs() <= step * 0.5 * 1.002 + 1e-7).all().item<bool>());
  CHECK_FALSE(torch::equal(q, x));
}

TEST_CASE("a second pass through either format changes nothing, and the cache keeps its dtype") {
  torch::manual_seed(4);
  const auto x = torch::randn({1, 2, 8, 32});
  for (const auto& f : llm::kv_formats()) {
    CAPTURE(f.name);
    const auto once = llm::quantize_dequantize(x, f);
    CHECK(torch::equal(llm::quantize_dequantize(once, f), once));
    CHECK(bool(llm::quantize_dequantize(x.to(torch::kFloat16), f).scalar_type() == torch::kFloat16));
  }
}

TEST_CASE("a token's bytes: K and V per layer and head, one fp16 scale each") {
  llm::CacheLayout layout;
  layout.layers = 2;
  layout.kv_heads = 4;
  layout.head_dim = 64;
  CHECK(llm::bytes_per_token(layout, format("int8")) == 2 * 4 * 2 * (64 + 2));
  CHECK(llm::bytes_per_token(layout, format("fp8")) == 2 * 4 * 2 * (64 + 2));
}

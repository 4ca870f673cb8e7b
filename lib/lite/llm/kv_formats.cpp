#include "lite/llm/kv_formats.hpp"

#include <cmath>

namespace lite::llm {

namespace {

torch::Tensor round_int8(const torch::Tensor& scaled) { return scaled.round().clamp(-127, 127); }

// fp8 e4m3 (OCP, as vLLM's fp8 KV cache): 3 mantissa bits, exponents -6..8, subnormals down to 2^-9, largest 448.
// A value's grid step is 2^(exponent - 3), with the exponent floored at -6 for subnormals.
torch::Tensor round_e4m3(const torch::Tensor& scaled) {
  const torch::Tensor magnitude = scaled.abs();
  const torch::Tensor exponent = torch::floor(torch::log2(magnitude.clamp_min(std::ldexp(1.0, -6)))).clamp_max(8);
  const torch::Tensor step = torch::exp2(exponent - 3);
  return torch::copysign(torch::round(magnitude / step).mul(step).clamp_max(448), scaled);
}

}  // namespace

const std::vector<KvFormatEntry>& kv_formats() {
  static const std::vector<KvFormatEntry> formats = {
      {"int8", "symmetric int8, an fp16 scale per head and token", 1, 2, 127, round_int8},
      {"fp8", "fp8 e4m3, an fp16 scale per head and token", 1, 2, 448, round_e4m3},
  };
  return formats;
}

torch::Tensor quantize_dequantize(const torch::Tensor& cache_tensor, const KvFormatEntry& format) {
  const torch::Tensor x = cache_tensor.to(torch::kFloat32);
  // the scale is stored in fp16: round it there, keeping it inside fp16's normal range
  torch::Tensor scale = (x.abs().amax(-1, /*keepdim=*/true) / format.max_value).clamp(6.2e-5, 65504);
  scale = scale.to(torch::kFloat16).to(torch::kFloat32);
  const torch::Tensor grid = format.round_to_grid((x / scale).clamp(-format.max_value, format.max_value));
  return grid.mul(scale).to(cache_tensor.scalar_type());
}

double bytes_per_token(const CacheLayout& layout, const KvFormatEntry& format) {
  return double(layout.layers * layout.kv_heads * 2) * (double(layout.head_dim) * format.element_bytes + format.scale_bytes);
}

}  // namespace lite::llm

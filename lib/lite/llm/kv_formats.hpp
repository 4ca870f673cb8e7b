#pragma once
// The KV-cache formats lite's what-if simulates (docs/llm.md "KV-cache what-if"), one row each: every K and V vector
// of a head at a token is scaled by its own absolute maximum (one fp16 scale per head and token, as int8 and fp8 KV
// caches store them) and rounded to the format's grid, then dequantized back to the cache's dtype, so the model reads
// exactly the values a quantized cache would give it.
#include <torch/script.h>

#include <string>
#include <vector>

#include "lite/llm/decoder_facts.hpp"

namespace lite::llm {

struct KvFormatEntry {
  const char* name;
  const char* description;
  double element_bytes;                    // per stored K or V element
  double scale_bytes;                      // per head and token, K and V each
  double max_value;                        // the grid's largest magnitude: the scale maps the row's maximum onto it
  torch::Tensor (*round_to_grid)(const torch::Tensor& scaled);  // float32 in [-max_value, max_value]
};

const std::vector<KvFormatEntry>& kv_formats();

// `cache_tensor` [.., head_dim] as the format would store and return it, in the cache's dtype.
torch::Tensor quantize_dequantize(const torch::Tensor& cache_tensor, const KvFormatEntry& format);

// Layers x kv_heads x 2 x (head_dim x element bytes + scale bytes).
double bytes_per_token(const CacheLayout& layout, const KvFormatEntry& format);

}  // namespace lite::llm

#pragma once
// What lite learns about a decoder and its KV cache, as the reports and --json read it. Torch-free.
#include <cstdint>
#include <string>

namespace lite::llm {

enum class CacheForm {
  stateless,     // forward(ids) -> logits: each step re-reads the whole context
  tensor_list,   // forward(ids, cache: List[Tensor] = [k0, v0, k1, v1, ...]) -> (logits, cache)
  pairs,         // forward(ids, past: List/Tuple of (K, V)) -> (logits, past), Hugging Face's past_key_values
};
const char* form_name(CacheForm form);

// The KV cache as the model returned it.
struct CacheLayout {
  int64_t layers = 0, kv_heads = 0, head_dim = 0;
  std::string dtype;          // "float32", "float16", ...
  int64_t element_bytes = 0;
  double bytes_per_token = 0;  // measured: the cache's bytes / (batch x context)
  // layers x kv_heads x head_dim x 2 (K and V) x element bytes: what the shapes say a token costs
  double formula_bytes_per_token() const { return double(layers * kv_heads * head_dim * 2 * element_bytes); }
};

}  // namespace lite::llm

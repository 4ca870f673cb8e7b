#pragma once
// What lite learns about a decoder and its KV cache, as the reports and --json read it. Torch-free.
#include <cstdint>
#include <string>
#include <vector>

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

namespace lite::llm {

// One simulated KV format of the what-if (kv_whatif.hpp), against the same decoder with the cache as it returns it.
struct KvFormatQuality {
  std::string format, description;
  double bytes_per_token = 0;
  double agreement = 1;              // share of decoded positions whose greedy token is the unquantized cache's
  double perplexity = 0;             // of the decoded positions' next tokens (meaningful on real token data)
};

struct KvWhatIf {
  std::string judged_on;             // the mode (weights) the cache ran with
  CacheLayout layout;                // the cache as the model returns it
  double perplexity = 0;             // with that cache, on the same positions
  bool real_tokens = false;          // perplexity means something
  int64_t sequences = 0, prefill_tokens = 0, scored_tokens = 0;
  std::vector<KvFormatQuality> formats;
};

}  // namespace lite::llm

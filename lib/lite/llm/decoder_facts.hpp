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
  int64_t sequences = 0, scored_tokens = 0;  // judged on: the same rows and positions as the cache as returned
};

// What bounded the what-if (kv_whatif_bound.hpp): its limit, what the data offered and what was judged of it.
struct KvWhatIfBound {
  double limit_s = 0;                // seconds it was allowed
  std::string limit_from;            // the option that set it: "kv_what_if_seconds" or "budget_s"
  double seconds = 0;                // what it took
  int64_t sequences_offered = 0;     // rows of the token data it would judge
  int64_t decode_steps_offered = 0;  // decode steps per row the rows' length gives
  int64_t decode_steps_cap = 0;      // decode steps per row at most
  int64_t decode_steps = 0;          // decode steps of the shortest judged row
  bool cut_by_time = false;          // rows not judged, or decoded short of the cap, for the limit
  bool cut_by_steps = false;         // rows longer than the cap
};

struct KvWhatIf {
  std::string judged_on;             // the mode (weights) the cache ran with
  CacheLayout layout;                // the cache as the model returns it
  double perplexity = 0;             // with that cache, on the same positions
  bool real_tokens = false;          // perplexity means something
  int64_t sequences = 0, prefill_tokens = 0, scored_tokens = 0;
  std::vector<KvFormatQuality> formats;
  bool skipped = false;              // not run ({kv_what_if} off): only the layout, from one prefill
  KvWhatIfBound bound = {};
};

}  // namespace lite::llm

#pragma once
// lite optimize on a decoder with an LLM request trace (docs/optimize.md "Decoders and the prefix cache"): every
// weight mode x KV-cache format x prefix-cache capacity, judged against a time-to-first-token target. Each weight
// mode is built by lite quantize (float is the model frozen) and measured once: quality against frozen float,
// decode speed, its prefill cost over a grid of (new, cached) tokens fitted to cache-sim's model, and its cache in
// each KV format (the KV-cache what-if). Each (mode, format) within the quality budget then replays the trace
// through cache-sim's prefix mode at every cache size in bytes: the same bytes hold more tokens in a lighter
// format, and a lighter model prefills the misses faster. The choice is the smallest cache that meets the target,
// then the fastest decoding, then the least quality lost. Torch-free header.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/cache/prefix/prefix_cache.hpp"

namespace lite::optimize {

// One weight mode as measured.
struct DecoderWeights {
  std::string mode;                     // "float" (frozen) or a quantize mode
  std::string status;                   // "measured", "over budget" (its weights alone lose), "failed", "skipped"
  std::string reason;
  std::string artifact;                 // in the work folder
  double quality_loss_pct = 0;          // against frozen float: perplexity increase in %, or % of tokens changed
  double agreement = 1;                 // next-token agreement with frozen float
  std::optional<double> perplexity;
  double tpot_p50_ms = 0, decode_tokens_per_s = 0;
  std::optional<cache::prefix::PrefillModel> prefill;  // fitted to its measured grid
  double prefill_fit_error = 0;         // the fit's largest relative error on the grid
  uint64_t file_bytes = 0;
  double build_s = 0, measure_s = 0;
};

// One (weights, KV format) pair and the prefix cache sized for it.
struct DecoderChoice {
  std::string mode, kv_format;          // kv_format: the cache's own dtype ("float32"), "int8" or "fp8"
  double kv_bytes_per_token = 0;
  double quality_loss_pct = 0;          // weights and cache together, against frozen float with its own cache
  std::string status;                   // "met", "not reached", "over budget", or the weights' failure
  std::string policy;                   // the best policy at the size below
  double cache_bytes = 0;               // the smallest simulated size meeting the target (else the largest)
  uint64_t capacity_tokens = 0;
  double token_hit_ratio = 0;
  double ttft_p50_ms = 0, ttft_p99_ms = 0;
  bool feasible = false, chosen = false;
};

struct DecoderSearch {
  std::string trace, trace_format;
  uint64_t requests = 0, prompt_tokens = 0, distinct_blocks = 0;
  uint32_t block_tokens = 0;
  std::optional<int64_t> max_positions;
  std::string quality_data;             // what quality was judged on
  std::string percentile;               // "p99" or "p50" of TTFT
  double target_ms = 0, budget_pct = 0;
  std::vector<std::string> policies;
  std::string cache_dtype;              // the cache as the model returns it
  std::vector<double> cache_bytes;      // the sizes simulated
  std::vector<DecoderWeights> weights;
  std::vector<DecoderChoice> choices;
  std::optional<size_t> chosen;         // into choices
  int simulations = 0;
};

void to_json(nlohmann::json& j, const DecoderWeights& w);
void to_json(nlohmann::json& j, const DecoderChoice& c);
void to_json(nlohmann::json& j, const DecoderSearch& s);

}  // namespace lite::optimize

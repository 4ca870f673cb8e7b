#pragma once
// What timing a decoder's generation measured (generation_timing.hpp), as reports and --json read it. Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/stats.hpp"
#include "lite/llm/decoder_facts.hpp"

namespace lite::llm {

struct GenerationStats {
  std::string form;                       // form_name()
  int64_t vocab = 0, batch = 1, prompt_tokens = 0, new_tokens = 0;
  std::optional<int64_t> max_positions;   // the model's own limit, when it says
  CacheLayout cache;                      // all zeros for a stateless decoder
  double kv_bytes_after_prefill = 0;      // the cache's bytes at the prompt's context (all rows)
  double kv_bytes_at_end = 0;             // at prompt + generated tokens
  bool cache_preallocated = false;        // the cache's context did not follow the tokens fed (a fixed buffer)
  // Warm-up: the first generations, apart from the steady state (TorchScript profiles and optimises a graph in
  // its first calls, and again for each new input shape).
  std::vector<double> warmup_ttft_ms;        // per warm-up generation, in order
  std::vector<double> warmup_first_step_ms;  // the first decode step of each warm-up generation
  int runs = 0;                              // steady generations timed
  stats::Summary ttft_ms;                    // one sample per steady generation
  stats::Summary tpot_ms;                    // every decode step of the steady generations
  double prefill_tokens_per_s = 0;           // batch x prompt tokens / median TTFT
  double decode_tokens_per_s = 0;            // batch / median TPOT
  std::vector<int64_t> tokens;               // row 0's greedy tokens (the last steady generation)
};

void to_json(nlohmann::json& j, const CacheLayout& c);
void to_json(nlohmann::json& j, const GenerationStats& s);

}  // namespace lite::llm

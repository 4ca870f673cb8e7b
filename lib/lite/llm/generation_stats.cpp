#include "lite/llm/generation_stats.hpp"

namespace lite::llm {

void to_json(nlohmann::json& j, const CacheLayout& c) {
  j = nlohmann::json{{"layers", c.layers},
                     {"kv_heads", c.kv_heads},
                     {"head_dim", c.head_dim},
                     {"dtype", c.dtype},
                     {"element_bytes", c.element_bytes},
                     {"bytes_per_token", c.bytes_per_token},
                     {"formula_bytes_per_token", c.formula_bytes_per_token()}};
}

namespace {
nlohmann::json summary_json(const stats::Summary& s) {
  if (s.count == 0) return nullptr;
  return nlohmann::json{{"count", s.count}, {"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90},
                        {"p99", s.p99},     {"min", s.min},   {"max", s.max}};
}
}  // namespace

void to_json(nlohmann::json& j, const GenerationStats& s) {
  j = nlohmann::json{{"form", s.form},
                     {"vocab", s.vocab},
                     {"batch", s.batch},
                     {"prompt_tokens", s.prompt_tokens},
                     {"generated_tokens", s.new_tokens},
                     {"max_positions", s.max_positions ? nlohmann::json(*s.max_positions) : nlohmann::json(nullptr)},
                     {"runs", s.runs},
                     {"ttft_ms", summary_json(s.ttft_ms)},
                     {"tpot_ms", summary_json(s.tpot_ms)},
                     {"prefill_tokens_per_s", s.prefill_tokens_per_s},
                     {"decode_tokens_per_s", s.decode_tokens_per_s},
                     {"warmup", {{"ttft_ms", s.warmup_ttft_ms}, {"first_step_ms", s.warmup_first_step_ms}}},
                     {"tokens", s.tokens}};
  if (s.form != "stateless") {
    j["kv_cache"] = s.cache;
    j["kv_cache"]["bytes_after_prefill"] = s.kv_bytes_after_prefill;
    j["kv_cache"]["bytes_at_end"] = s.kv_bytes_at_end;
    j["kv_cache"]["preallocated"] = s.cache_preallocated;
  }
}

}  // namespace lite::llm

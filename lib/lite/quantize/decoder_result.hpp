#pragma once
// lite quantize on a decoder (docs/llm.md): each mode judged on the decoder's terms (next-token agreement with the
// float model, perplexity on token data) and timed as it serves (time to first token, time per token). Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/llm/decoder_facts.hpp"

namespace lite::quantize {

struct DecoderCandidate {
  std::string mode;                 // "float32" for the frozen float reference
  std::string problem;              // why it was not built or judged ("" when it was)
  uint64_t file_bytes = 0;
  double agreement = 1;             // share of scored positions whose greedy token is the float model's
  std::optional<double> perplexity; // on --eval tokens (none on random tokens)
  double quality_loss_pct = 0;      // perplexity increase over float in % (with --eval), else disagreement in %
  double ttft_p50_ms = 0, tpot_p50_ms = 0, decode_tokens_per_s = 0;
  double ttft_speedup = 0, decode_speedup = 0;  // float's time / the candidate's
  bool meets_tolerance = false;
  bool chosen = false;
};

struct DecoderQuantizeResult {
  std::string form;                 // stateless, kv-list, kv-pairs
  std::string quality_data;         // what quality was measured on
  int64_t scored_tokens = 0;
  int64_t prompt_tokens = 0, generated_tokens = 0;
  DecoderCandidate reference;       // frozen float
  std::vector<DecoderCandidate> candidates;
  std::optional<llm::KvWhatIf> kv_cache;  // the written mode's cache in int8 and fp8 (none for a stateless decoder)
};

void to_json(nlohmann::json& j, const DecoderCandidate& c);
void to_json(nlohmann::json& j, const DecoderQuantizeResult& r);

}  // namespace lite::quantize

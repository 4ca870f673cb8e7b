#pragma once
// lite prune on a decoder (docs/prune.md "Decoders"): what was cut from each attention and MLP, and the decoder's
// figures before and after (time to first token, time per token, KV bytes per token, parameters, file size,
// next-token agreement and perplexity). Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite::llm {
struct GenerationStats;
}  // namespace lite::llm

namespace lite::prune {

// One attention: its KV heads, each removed with the query heads that read it (its group).
struct AttentionCut {
  std::string module;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  int64_t heads_kept = 0, kv_heads_kept = 0;
  std::string counts_in;  // where the head counts live: "attributes" or "graph constants"
  std::string skipped;    // why it was left alone ("" when cut as planned)
};

// One MLP: its hidden units (rows of up and gate, columns of down).
struct MlpCut {
  std::string module;
  int64_t width = 0, kept = 0;
  std::string skipped;
};

struct DecoderFigures {
  uint64_t parameters = 0, file_bytes = 0;
  int64_t heads = 0, kv_heads = 0, mlp_width = 0;  // summed over layers
  double kv_bytes_per_token = 0;                   // measured from the returned cache (0: stateless)
  double kv_formula_bytes_per_token = 0;           // layers x kv_heads x head_dim x 2 x element bytes
  double ttft_p50_ms = 0, tpot_p50_ms = 0, tpot_p99_ms = 0, decode_tokens_per_s = 0;
  double agreement = 1;                            // next-token agreement with the original
  std::optional<double> perplexity;                // on --eval token ids only
};

struct DecoderPruneResult {
  std::string form;          // stateless, kv-list, kv-pairs
  std::string quality_data;  // what quality was measured on
  int64_t scored_tokens = 0, prompt_tokens = 0, generated_tokens = 0;
  std::vector<AttentionCut> attention;
  std::vector<MlpCut> mlp;
  DecoderFigures before, after;
};

// A decoder's speed figures (TTFT, time per token, decode tokens/s, KV bytes per token) from one timed generation:
// lite prune's before and after, lite run's original and final (decoder_prune.cpp).
void fill_speed(DecoderFigures& f, const llm::GenerationStats& s);

void to_json(nlohmann::json& j, const AttentionCut& c);
void to_json(nlohmann::json& j, const MlpCut& c);
void to_json(nlohmann::json& j, const DecoderFigures& f);
void to_json(nlohmann::json& j, const DecoderPruneResult& r);

}  // namespace lite::prune

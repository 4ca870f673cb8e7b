#pragma once
// lite quantize on a decoder: what run() does instead of its classifier stages when the model is a decoder
// (docs/llm.md). Torch side; the result record is decoder_result.hpp.
#include <torch/script.h>

#include <string>

#include "lite/llm/generation_timing.hpp"
#include "lite/llm/token_data.hpp"
#include "lite/llm/token_quality.hpp"
#include "lite/quantize/decoder_result.hpp"
#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

// A decoder knob was given, or the model's forward takes a KV cache (llm::takes_kv_cache).
bool is_decoder_run(const QuantizeOptions& o, const torch::jit::Module& module);

// A decoder that prefills through a prefill method (a traced one) is refused, InputError naming `path`:
// quantization rewrites forward alone. lite quantize and lite optimize's decoder search, before any work.
void refuse_prefill_method(const torch::jit::Module& module, const std::string& path);

// Frozen float measured once by a caller that quantizes one decoder in several modes (quantize.hpp's run
// overload): the frozen module, its generation timing, the token data and its scored reference.
struct DecoderReference {
  torch::jit::Module frozen;
  llm::GenerationStats timing;
  llm::TokenData data;
  llm::ReferenceTokens tokens;
};

// What one decoder run carries from stage to stage.
struct DecoderRun {
  QuantizeResult& result;
  DecoderQuantizeResult decoder_result;
  llm::GenerationPlan plan;
  llm::TokenData data;
  llm::ReferenceTokens reference_tokens;
  std::optional<int64_t> max_positions;  // the source's (frozen and quantized copies no longer carry it)
};

// Frozen float as the reference, every weight mode built, judged and timed, the choice written; fills r.decoder,
// r.mode, r.output and the gates ("tolerance", "speed").
void run_decoder(Context& c, const ModeEntry& requested, QuantizeResult& r);

}  // namespace lite::quantize

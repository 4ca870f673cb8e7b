#pragma once
// The decoder knobs' flags (llm::DecoderKnobs: --prompt-tokens, --generate), one wording for every verb that runs a
// decoder (profile, quantize). Header-only and torch-free.
#include <CLI/CLI.hpp>
#include <string>

#include "lite/llm/decoder_knobs.hpp"

namespace lite::cli {

inline void add_decoder_knob_flags(CLI::App& app, llm::DecoderKnobs& k, const std::string& group) {
  app.add_option("--prompt-tokens", k.prompt_tokens, "Decoder: prompt length in tokens (default 128)")->group(group);
  app.add_option("--generate", k.generate, "Decoder: tokens generated per prompt, greedy (default 32)")->group(group);
}

}  // namespace lite::cli

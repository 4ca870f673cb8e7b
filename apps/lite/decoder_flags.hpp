#pragma once
// The decoder knobs' flags (llm::DecoderKnobs: --prompt-tokens, --generate), one wording for every verb that runs a
// decoder (profile, quantize). Header-only and torch-free.
#include <CLI/CLI.hpp>
#include <string>

#include "lite/llm/decoder_knobs.hpp"

namespace lite::cli {

// `group`: the help section ("Options" for the verb's own).
inline void add_decoder_knob_flags(CLI::App& app, llm::DecoderKnobs& k, const std::string& group) {
  app.add_option("--prompt-tokens", k.prompt_tokens, "Decoder: prompt length in tokens (unset: 128, fit to the model)")
      ->group(group);
  app.add_option("--generate", k.generate, "Decoder: tokens generated, greedy (unset: 32, fit to the model)")
      ->group(group);
}

}  // namespace lite::cli

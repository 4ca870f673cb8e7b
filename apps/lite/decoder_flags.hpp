#pragma once
// The decoder knobs' flags (llm::DecoderKnobs: --prompt-tokens, --generate), one wording for every verb that runs a
// decoder (profile, quantize), and quantize's KV-cache what-if flags. Header-only and torch-free.
#include <CLI/CLI.hpp>
#include <string>

#include "flag_wording.hpp"
#include "lite/llm/decoder_knobs.hpp"

namespace lite::cli {

// `group`: the help section ("Options" for the verb's own).
inline void add_decoder_knob_flags(CLI::App& app, llm::DecoderKnobs& k, const std::string& group) {
  app.add_option("--prompt-tokens", k.prompt_tokens, "Decoder: prompt length in tokens (unset: 128, fit to the model)")
      ->group(group);
  app.add_option("--generate", k.generate, "Decoder: tokens generated, greedy (unset: 32, fit to the model)")
      ->group(group);
}

// lite quantize's KV-cache what-if on a decoder (keys kv_what_if, kv_what_if_seconds).
inline void add_kv_what_if_flags(CLI::App& app, bool& run, double& seconds, const std::string& group) {
  name_flag("kv_what_if", "--no-kv-what-if");
  app.add_flag("--no-kv-what-if{false}", run, "Decoder: skip the KV-cache what-if (int8/fp8 caches simulated)")
      ->group(group);
  app.add_option("--kv-what-if-seconds", seconds, "Decoder: KV what-if seconds, at most half --budget's rest")
      ->group(group);
}

}  // namespace lite::cli

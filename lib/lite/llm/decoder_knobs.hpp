#pragma once
// The decoder knobs the verbs that run a decoder share (profile, quantize): one field list and one rule set, as
// measure::TimingKnobs is for timing. Unset lengths take the defaults, shrunk to fit a model that states its
// positions (generation_plan.hpp). Torch-free.
#include <cstdint>
#include <optional>

#include "lite/core/options.hpp"

namespace lite::llm {

inline constexpr int64_t kDefaultPromptTokens = 128;
inline constexpr int64_t kDefaultGenerate = 32;
inline constexpr int64_t kMaxDecoderTokens = 1 << 20;

struct DecoderKnobs {
  std::optional<int64_t> prompt_tokens;  // prompt length; unset: 128
  std::optional<int64_t> generate;       // tokens generated per prompt, greedy; unset: 32
  bool given() const { return prompt_tokens || generate; }
};

// The knobs' one field list, spliced into a verb's own (OptionReader / OptionWriter).
template <class Fields, class Knobs>
Fields& decoder_knob_fields(Fields& f, Knobs& k) {
  return f.field("prompt_tokens", k.prompt_tokens).field("generate", k.generate);
}

inline void validate(const DecoderKnobs& k) {
  if (k.prompt_tokens) option_rules::in_range("prompt_tokens", double(*k.prompt_tokens), 1, double(kMaxDecoderTokens));
  if (k.generate) option_rules::in_range("generate", double(*k.generate), 1, double(kMaxDecoderTokens));
}

}  // namespace lite::llm

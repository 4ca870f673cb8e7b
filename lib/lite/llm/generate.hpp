#pragma once
// The generation loop lite times decoders with: greedy (the argmax token), so its tokens can be compared with any
// other greedy loop over the same file. Every call runs under NoGradGuard; Ctrl-C stops it between steps.
#include <torch/script.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lite/llm/decoder.hpp"

namespace lite::llm {

struct GenerationRun {
  double ttft_ms = 0;              // the prompt's prefill and the choice of the first token
  std::vector<double> step_ms;     // each later token: one decode step and its argmax
  std::vector<int64_t> tokens;     // row 0's generated ids, the first token included
  int64_t context = 0;             // prompt + generated tokens the cache holds at the end
  c10::IValue cache;               // the cache after the last step
};

// Prefills `prompt` [B, P] and generates `new_tokens` >= 1 tokens per row (the first from the prefill).
GenerationRun generate(Decoder& decoder, const torch::Tensor& prompt, int64_t new_tokens);

// InputError naming `file` when an id of `ids` [N, T] is negative or not below `vocab` (the width of the model's
// logits): the model's embedding would fail on it, in a message that blames the model instead of the file.
void check_token_ids(const torch::Tensor& ids, int64_t vocab, const std::string& file);

// Seeded prompt ids [batch, tokens], uniform below `vocab`.
torch::Tensor random_prompt(int64_t batch, int64_t tokens, int64_t vocab, uint64_t seed);

}  // namespace lite::llm

#pragma once
// The token sequences a decoder's quality is judged on, for every verb that judges one (quantize, optimize): the
// held-out ids of an evaluation file, else seeded random sequences (which give agreement, not perplexity).
#include <torch/script.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace lite::llm {

struct TokenData {
  torch::Tensor tokens;  // int64 [N, T]
  std::string name;      // what the report says quality was measured on
  bool real = false;     // held-out text: perplexity means something
};

// `eval`: a tensor file (or .npy) of int64 ids [N, T >= 2], its first `rows` rows; InputError naming the file when
// it holds anything else or sequences beyond `max_positions`. Without it: 16 seeded random sequences of 64 tokens
// (fewer when the model holds fewer positions) below `vocab`.
TokenData load_token_data(const std::optional<std::filesystem::path>& eval, std::optional<int64_t> rows, int64_t vocab,
                          std::optional<int64_t> max_positions);

}  // namespace lite::llm

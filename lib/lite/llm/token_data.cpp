#include "lite/llm/token_data.hpp"

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/llm/generate.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/inputs.hpp"

namespace lite::llm {

namespace {
constexpr int64_t kRandomRows = 16, kRandomTokens = 64;
constexpr uint64_t kRandomSeed = 12345;
}  // namespace

TokenData load_token_data(const std::optional<std::filesystem::path>& eval, std::optional<int64_t> rows, int64_t vocab,
                          std::optional<int64_t> max_positions) {
  TokenData t;
  if (eval) {
    const model::Dataset data = model::load_dataset(*eval);
    if (data.x.scalar_type() != torch::kInt64 || data.x.dim() != 2 || data.x.size(1) < 2)
      throw InputError(eval->string(), fmt::format("holds {} {}; a decoder is judged on int64 token ids [N, T >= 2]",
                                                   model::dtype_name(data.x.scalar_type()),
                                                   fmt::join(data.x.sizes().vec(), "x")),
                       "save the held-out token ids as an int64 tensor, one sequence per row");
    const int64_t n = rows ? std::min<int64_t>(*rows, data.x.size(0)) : data.x.size(0);
    t.tokens = data.x.narrow(0, 0, n).contiguous();
    check_token_ids(t.tokens, vocab, eval->string());
    if (max_positions && t.tokens.size(1) > *max_positions)
      throw InputError(eval->string(), fmt::format("holds sequences of {} tokens and the model {} positions",
                                                   t.tokens.size(1), *max_positions),
                       "cut the sequences to the model's positions");
    t.name = fmt::format("{} ({} sequences of {} tokens)", eval->string(), n, t.tokens.size(1));
    t.real = true;
    return t;
  }
  const int64_t len = max_positions ? std::min(kRandomTokens, *max_positions) : kRandomTokens;
  t.tokens = random_prompt(kRandomRows, len, vocab, kRandomSeed);
  t.name = fmt::format("{} seeded random sequences of {} tokens (no --eval: agreement only)", kRandomRows, len);
  return t;
}

}  // namespace lite::llm

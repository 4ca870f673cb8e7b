#include "lite/llm/generate.hpp"

#include <fmt/format.h>

#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

namespace lite::llm {

namespace {
// The greedy choice per row, as [B, 1] ids for the next step.
torch::Tensor next_ids(const torch::Tensor& last_logits) { return last_logits.argmax(-1, /*keepdim=*/true); }
}  // namespace

GenerationRun generate(Decoder& decoder, const torch::Tensor& prompt, int64_t new_tokens) {
  torch::NoGradGuard no_grad;
  GenerationRun run;
  auto start = Clock::now();
  Step step = decoder.prefill(prompt);
  torch::Tensor next = next_ids(step.last_logits);
  run.tokens.push_back(next[0][0].item<int64_t>());  // the item() waits for the result, so it is timed
  run.ttft_ms = 1000 * seconds_since(start);
  for (int64_t i = 1; i < new_tokens; ++i) {
    throw_if_interrupted();
    start = Clock::now();
    step = decoder.extend(next, step.cache);
    next = next_ids(step.last_logits);
    run.tokens.push_back(next[0][0].item<int64_t>());
    run.step_ms.push_back(1000 * seconds_since(start));
  }
  run.cache = step.cache;
  run.context = decoder.context_of(step.cache);
  return run;
}

void check_token_ids(const torch::Tensor& ids, int64_t vocab, const std::string& file) {
  const torch::Tensor outside = (ids < 0).logical_or(ids >= vocab);
  if (!outside.any().item<bool>()) return;
  const torch::Tensor first = outside.nonzero()[0];  // [row, position]
  const int64_t row = first[0].item<int64_t>(), position = first[1].item<int64_t>();
  throw InputError(file, fmt::format("holds token id {} (row {}, position {}) and the model's vocabulary is {} ids "
                                     "(0 to {})", ids[row][position].item<int64_t>(), row, position, vocab, vocab - 1),
                   "give ids from the model's own tokenizer, below its vocabulary");
}

torch::Tensor random_prompt(int64_t batch, int64_t tokens, int64_t vocab, uint64_t seed) {
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  return torch::randint(0, vocab, {batch, tokens}, gen, torch::kInt64);
}

}  // namespace lite::llm

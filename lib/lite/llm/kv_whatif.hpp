#pragma once
// The KV-cache what-if (docs/llm.md): the decoder decodes held-out token sequences one token at a time, teacher-
// forced, with its cache quantized and dequantized between steps in each simulated format (kv_formats.hpp), and is
// compared with the same steps on the cache as it returns it: next-token agreement, perplexity, and the bytes a
// token of context takes, the figure cache-sim's --kv-bytes-per-token turns into capacity. Bounded in time
// (kv_whatif_bound.hpp): blocks of rows, every pass in lockstep, so every format is judged on the same positions.
#include <torch/script.h>

#include <cstdint>
#include <string>

#include "lite/core/progress.hpp"
#include "lite/llm/decoder.hpp"
#include "lite/llm/kv_whatif_bound.hpp"

namespace lite::llm {

struct KvWhatIfPlan {
  int64_t max_sequences = 8;                          // the first rows of the token data
  int64_t batch = 4;                                  // rows stepped together: one block
  double limit_s = kKvWhatIfSeconds;                  // no block starts, and decoding stops, past it (see the pace)
  std::string limit_from = "kv_what_if_seconds";      // the option that set the limit, as the result records it
  int64_t max_decode_steps = kKvWhatIfMaxDecodeSteps;  // per row
};

// `tokens` int64 [N, T >= 2]: each row's first T/2 tokens are prefilled, the rest decoded one step at a time (at most
// plan.max_decode_steps). `real_tokens`: perplexity means something (held-out text, not random ids). Requires a
// decoder with a KV cache.
KvWhatIf kv_cache_what_if(Decoder& decoder, const torch::Tensor& tokens, bool real_tokens, const std::string& judged_on,
                          Progress& progress, const KvWhatIfPlan& plan = {});

// The what-if skipped: the cache's layout (its bytes per token) from one prefill of the first row's first half.
KvWhatIf kv_cache_layout_only(Decoder& decoder, const torch::Tensor& tokens, const std::string& judged_on);

}  // namespace lite::llm

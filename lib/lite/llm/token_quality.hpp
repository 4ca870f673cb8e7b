#pragma once
// A decoder's quality on token sequences, teacher-forced: each sequence's prefill gives the logits of every
// position, so perplexity (the exponent of the mean cross-entropy of each next token) and next-token agreement with
// a reference decoder (the share of positions whose greedy choice is the same) come from one call per batch.
#include <torch/script.h>

#include <cstdint>
#include <optional>

#include "lite/core/progress.hpp"
#include "lite/llm/decoder.hpp"

namespace lite::llm {

// The reference's choices at every scored position and its perplexity, kept to judge candidates against.
struct ReferenceTokens {
  torch::Tensor choices;       // [N, T-1] argmax of positions 0..T-2
  double perplexity = 0;
  int64_t scored_tokens = 0;   // N x (T-1)
};

struct TokenQuality {
  double agreement = 0;        // share of positions where the candidate's choice equals the reference's
  double perplexity = 0;
};

// `tokens`: int64 [N, T], T >= 2; `batch` rows per call.
ReferenceTokens score_reference(Decoder& reference, const torch::Tensor& tokens, int64_t batch, Progress& progress);
TokenQuality score_candidate(Decoder& candidate, const torch::Tensor& tokens, int64_t batch,
                             const ReferenceTokens& reference, Progress& progress);

}  // namespace lite::llm

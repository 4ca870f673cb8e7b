#include "lite/llm/token_quality.hpp"

#include <cmath>

#include "lite/core/interrupt.hpp"

namespace lite::llm {

namespace {

struct Pass {
  torch::Tensor choices;  // [N, T-1]
  double nll_sum = 0;     // summed cross-entropy of each next token, in nats
};

Pass run_pass(Decoder& d, const torch::Tensor& tokens, int64_t batch, Progress& progress, const char* phase) {
  torch::NoGradGuard no_grad;
  const int64_t n = tokens.size(0);
  ProgressPhase bar(progress, phase, uint64_t((n + batch - 1) / batch));
  std::vector<torch::Tensor> choices;
  Pass p;
  for (int64_t begin = 0; begin < n; begin += batch) {
    throw_if_interrupted();
    const torch::Tensor rows = tokens.narrow(0, begin, std::min(batch, n - begin));
    const torch::Tensor logits = d.prefill(rows).logits.narrow(1, 0, rows.size(1) - 1).to(torch::kFloat32);
    const torch::Tensor targets = rows.narrow(1, 1, rows.size(1) - 1);
    const torch::Tensor logp = torch::log_softmax(logits, -1);
    p.nll_sum -= logp.gather(-1, targets.unsqueeze(-1)).sum().item<double>();
    choices.push_back(logits.argmax(-1));
    bar.advance();
  }
  p.choices = torch::cat(choices, 0);
  return p;
}

}  // namespace

ReferenceTokens score_reference(Decoder& reference, const torch::Tensor& tokens, int64_t batch, Progress& progress) {
  const Pass p = run_pass(reference, tokens, batch, progress, "scoring the float model");
  ReferenceTokens r;
  r.choices = p.choices;
  r.scored_tokens = p.choices.numel();
  r.perplexity = std::exp(p.nll_sum / double(r.scored_tokens));
  return r;
}

TokenQuality score_candidate(Decoder& candidate, const torch::Tensor& tokens, int64_t batch,
                             const ReferenceTokens& reference, Progress& progress) {
  const Pass p = run_pass(candidate, tokens, batch, progress, "scoring the candidate");
  TokenQuality q;
  q.agreement = p.choices.eq(reference.choices).to(torch::kFloat64).mean().item<double>();
  q.perplexity = std::exp(p.nll_sum / double(reference.scored_tokens));
  return q;
}

}  // namespace lite::llm

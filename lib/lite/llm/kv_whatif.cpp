#include "lite/llm/kv_whatif.hpp"

#include <cmath>
#include <functional>
#include <vector>

#include "lite/core/interrupt.hpp"
#include "lite/llm/kv_formats.hpp"

namespace lite::llm {

namespace {

using CacheRewrite = std::function<torch::Tensor(const torch::Tensor&)>;

struct SteppedPass {
  torch::Tensor choices;  // [rows, T - P]: the greedy token at each decoded position
  double nll_sum = 0;     // cross-entropy of each position's next token, in nats
  c10::IValue last_cache;
};

// Accumulates one call's logits [B, n, V] against the tokens they predict [B, n].
void score(const torch::Tensor& logits, const torch::Tensor& targets, SteppedPass& p, std::vector<torch::Tensor>& picks) {
  const torch::Tensor lf = logits.to(torch::kFloat32);
  p.nll_sum -= torch::log_softmax(lf, -1).gather(-1, targets.unsqueeze(-1)).sum().item<double>();
  picks.push_back(lf.argmax(-1));
}

// Prefill P tokens, then one decode step per later token, the cache rewritten after every call (identity for the
// cache as returned). Scores positions P-1 .. T-2.
SteppedPass stepped_pass(Decoder& d, const torch::Tensor& tokens, int64_t batch, const CacheRewrite* rewrite,
                         ProgressPhase& bar) {
  torch::NoGradGuard no_grad;
  const int64_t n = tokens.size(0), t = tokens.size(1), p = t / 2;
  SteppedPass pass;
  std::vector<torch::Tensor> row_choices;
  for (int64_t begin = 0; begin < n; begin += batch) {
    const torch::Tensor rows = tokens.narrow(0, begin, std::min(batch, n - begin));
    std::vector<torch::Tensor> picks;
    // contiguous ids: a quantized embedding reads its indices as one block
    Step step = d.prefill(rows.narrow(1, 0, p).contiguous());
    score(step.logits.narrow(1, p - 1, 1), rows.narrow(1, p, 1), pass, picks);
    c10::IValue cache = rewrite ? d.map_cache(step.cache, *rewrite) : step.cache;
    for (int64_t pos = p; pos + 1 < t; ++pos) {
      throw_if_interrupted();
      step = d.extend(rows.narrow(1, pos, 1).contiguous(), cache);
      score(step.logits, rows.narrow(1, pos + 1, 1), pass, picks);
      cache = rewrite ? d.map_cache(step.cache, *rewrite) : step.cache;
    }
    row_choices.push_back(torch::cat(picks, 1));
    pass.last_cache = cache;
    bar.advance();
  }
  pass.choices = torch::cat(row_choices, 0);
  return pass;
}

}  // namespace

KvWhatIf kv_cache_what_if(Decoder& decoder, const torch::Tensor& tokens, bool real_tokens, const std::string& judged_on,
                          Progress& progress, const KvWhatIfPlan& plan) {
  const torch::Tensor rows = tokens.narrow(0, 0, std::min(plan.max_sequences, tokens.size(0)));
  const int64_t batches = (rows.size(0) + plan.batch - 1) / plan.batch;
  const auto& formats = kv_formats();
  ProgressPhase bar(progress, "KV-cache what-if", uint64_t(batches) * (1 + formats.size()));
  KvWhatIf w;
  w.judged_on = judged_on;
  w.real_tokens = real_tokens;
  w.sequences = rows.size(0);
  w.prefill_tokens = rows.size(1) / 2;
  const SteppedPass as_returned = stepped_pass(decoder, rows, plan.batch, nullptr, bar);
  w.scored_tokens = as_returned.choices.numel();
  w.layout = decoder.layout_of(as_returned.last_cache);
  w.perplexity = std::exp(as_returned.nll_sum / double(w.scored_tokens));
  for (const KvFormatEntry& f : formats) {
    const CacheRewrite rewrite = [&f](const torch::Tensor& t) { return quantize_dequantize(t, f); };
    const SteppedPass q = stepped_pass(decoder, rows, plan.batch, &rewrite, bar);
    KvFormatQuality r;
    r.format = f.name;
    r.description = f.description;
    r.bytes_per_token = bytes_per_token(w.layout, f);
    r.agreement = q.choices.eq(as_returned.choices).to(torch::kFloat64).mean().item<double>();
    r.perplexity = std::exp(q.nll_sum / double(w.scored_tokens));
    w.formats.push_back(r);
  }
  return w;
}

}  // namespace lite::llm

#include "lite/llm/kv_whatif.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "lite/core/clock.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/llm/kv_formats.hpp"

namespace lite::llm {

namespace {

// One pass over the rows: the cache as the model returns it (no format), or rewritten in one format after every call.
struct KvPass {
  const KvFormatEntry* format = nullptr;
  double nll_sum = 0;    // cross-entropy of each scored position's next token, in nats
  int64_t agreeing = 0;  // scored positions whose greedy token is the as-returned pass's
  c10::IValue cache;
};

// Adds the cross-entropy of `targets` [B, n] under `logits` [B, n, V] to the pass; returns the greedy tokens [B, n].
torch::Tensor score_into(const torch::Tensor& logits, const torch::Tensor& targets, KvPass& p) {
  const torch::Tensor lf = logits.to(torch::kFloat32);
  p.nll_sum -= torch::log_softmax(lf, -1).gather(-1, targets.unsqueeze(-1)).sum().item<double>();
  return lf.argmax(-1);
}

// The pass's cache for its next call: `cache` as returned, or quantized and dequantized in the pass's format.
void keep_cache(const Decoder& d, const c10::IValue& cache, KvPass& p) {
  if (!p.format) {
    p.cache = cache;
    return;
  }
  const KvFormatEntry& f = *p.format;
  p.cache = d.map_cache(cache, [&f](const torch::Tensor& t) { return quantize_dequantize(t, f); });
}

// One position of every pass, `logits[i]` pass i's; passes[0] (the cache as returned) gives the greedy tokens the
// others are compared with.
void score_passes(std::vector<KvPass>& passes, const std::vector<torch::Tensor>& logits, const torch::Tensor& targets) {
  const torch::Tensor reference = score_into(logits[0], targets, passes[0]);
  passes[0].agreeing += reference.numel();
  for (size_t i = 1; i < passes.size(); ++i)
    passes[i].agreeing += score_into(logits[i], targets, passes[i]).eq(reference).sum().item<int64_t>();
}

// One block of rows: one prefill of the first `p` tokens (its logits read no cache, so they score every pass alike),
// then every pass decodes the same positions in lockstep, each from its own cache, until the pace stops them.
// Returns the decode steps taken.
int64_t run_kv_block(Decoder& d, const torch::Tensor& rows, int64_t p, const KvWhatIfPace& pace, Clock::time_point start,
                  std::vector<KvPass>& passes, ProgressPhase& bar) {
  // contiguous ids: a quantized embedding reads its indices as one block
  const Step first = d.prefill(rows.narrow(1, 0, p).contiguous());
  score_passes(passes, std::vector<torch::Tensor>(passes.size(), first.logits.narrow(1, p - 1, 1)), rows.narrow(1, p, 1));
  for (KvPass& pass : passes) keep_cache(d, first.cache, pass);
  bar.advance();
  int64_t steps = 0;
  for (; pace.take_step(steps, seconds_since(start)); ++steps) {
    const int64_t pos = p + steps;
    const torch::Tensor ids = rows.narrow(1, pos, 1).contiguous();
    std::vector<torch::Tensor> logits;
    for (KvPass& pass : passes) {
      throw_if_interrupted();
      const Step step = d.extend(ids, pass.cache);
      logits.push_back(step.logits);
      keep_cache(d, step.cache, pass);
    }
    score_passes(passes, logits, rows.narrow(1, pos + 1, 1));
    bar.advance();
  }
  return steps;
}

// Perplexity and agreement of every pass over the positions all of them scored.
void fill_kv_results(KvWhatIf& w, const std::vector<KvPass>& passes) {
  const double scored = double(std::max<int64_t>(w.scored_tokens, 1));
  w.perplexity = std::exp(passes[0].nll_sum / scored);
  for (size_t i = 1; i < passes.size(); ++i) {
    const KvFormatEntry& f = *passes[i].format;
    KvFormatQuality r;
    r.format = f.name;
    r.description = f.description;
    r.bytes_per_token = bytes_per_token(w.layout, f);
    r.agreement = double(passes[i].agreeing) / scored;
    r.perplexity = std::exp(passes[i].nll_sum / scored);
    r.sequences = w.sequences;
    r.scored_tokens = w.scored_tokens;
    w.formats.push_back(r);
  }
}

// The bound's plan: the limit, what the rows offer and the cap on decode steps.
KvWhatIfBound plan_bound(const KvWhatIfPlan& plan, int64_t rows, int64_t length) {
  KvWhatIfBound b;
  b.limit_s = plan.limit_s;
  b.limit_from = plan.limit_from;
  b.sequences_offered = rows;
  b.decode_steps_offered = length - 1 - length / 2;
  b.decode_steps_cap = plan.max_decode_steps;
  b.cut_by_steps = b.decode_steps_offered > b.decode_steps_cap;
  b.decode_steps = std::min(b.decode_steps_offered, b.decode_steps_cap);
  return b;
}

}  // namespace

KvWhatIf kv_cache_what_if(Decoder& decoder, const torch::Tensor& tokens, bool real_tokens, const std::string& judged_on,
                          Progress& progress, const KvWhatIfPlan& plan) {
  torch::NoGradGuard no_grad;
  const auto start = Clock::now();
  const torch::Tensor rows = tokens.narrow(0, 0, std::min(plan.max_sequences, tokens.size(0)));
  const int64_t n = rows.size(0), p = rows.size(1) / 2, blocks = (n + plan.batch - 1) / plan.batch;
  KvWhatIf w;
  w.judged_on = judged_on;
  w.real_tokens = real_tokens;
  w.prefill_tokens = p;
  w.bound = plan_bound(plan, n, rows.size(1));
  const int64_t steps = w.bound.decode_steps;
  const KvWhatIfPace pace(plan.limit_s, blocks, steps);
  std::vector<KvPass> passes(1);
  for (const KvFormatEntry& f : kv_formats()) {
    passes.emplace_back();
    passes.back().format = &f;
  }
  ProgressPhase bar(progress, "KV-cache what-if", uint64_t(blocks * (1 + steps)));
  int64_t done = 0;
  for (; pace.start_block(done, seconds_since(start)); ++done) {
    const int64_t begin = done * plan.batch;
    const torch::Tensor block = rows.narrow(0, begin, std::min(plan.batch, n - begin));
    const int64_t taken = run_kv_block(decoder, block, p, pace, start, passes, bar);
    if (done == 0) w.layout = decoder.layout_of(passes[0].cache);
    w.bound.decode_steps = std::min(w.bound.decode_steps, taken);
    w.sequences += block.size(0);
    w.scored_tokens += block.size(0) * (1 + taken);
  }
  w.bound.cut_by_time = done < blocks || w.bound.decode_steps < steps;
  w.bound.seconds = seconds_since(start);
  fill_kv_results(w, passes);
  return w;
}

KvWhatIf kv_cache_layout_only(Decoder& decoder, const torch::Tensor& tokens, const std::string& judged_on) {
  torch::NoGradGuard no_grad;
  KvWhatIf w;
  w.judged_on = judged_on;
  w.skipped = true;
  const int64_t p = std::max<int64_t>(1, tokens.size(1) / 2);
  w.layout = decoder.layout_of(decoder.prefill(tokens.narrow(0, 0, 1).narrow(1, 0, p).contiguous()).cache);
  w.prefill_tokens = p;
  return w;
}

}  // namespace lite::llm

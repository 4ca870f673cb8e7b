#include "lite/llm/generation_timing.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/llm/generate.hpp"

namespace lite::llm {

namespace {

constexpr int kMinRuns = 3;
constexpr int kMaxRuns = 1000;

// Every row's cache bytes (layout_of's bytes_per_token is per position of one row).
double cache_bytes(const Decoder& d, const c10::IValue& cache, int64_t batch) {
  if (d.form() == CacheForm::stateless) return 0;
  return d.layout_of(cache).bytes_per_token * double(d.context_of(cache)) * double(batch);
}

// The prompt: the file's ids, else seeded ids below the vocabulary the first call revealed.
torch::Tensor prompt_of(const GenerationPlan& plan, int64_t vocab) {
  if (plan.prompt) return *plan.prompt;
  return random_prompt(plan.batch, plan.prompt_tokens, vocab, plan.seed);
}

// The first prompt-shaped call (after the decode-shaped one): a prompt of zeros, shaped like the real one, whose
// logits reveal the vocabulary. It is the first warm-up generation's prefill, timed as such.
int64_t first_call(Decoder& d, const GenerationPlan& plan, GenerationStats& s) {
  const torch::Tensor zeros = torch::zeros({plan.batch, plan.prompt_tokens}, torch::kInt64);
  auto start = Clock::now();
  const Step step = d.prefill(zeros);
  step.last_logits.argmax(-1);
  s.warmup_ttft_ms.push_back(1000 * seconds_since(start));
  return step.last_logits.size(-1);
}

void record_cache(Decoder& d, const GenerationPlan& plan, const GenerationRun& run, GenerationStats& s) {
  if (d.form() == CacheForm::stateless) return;
  const Step after_prefill = d.prefill(prompt_of(plan, s.vocab));
  s.cache = d.layout_of(run.cache);
  s.kv_bytes_after_prefill = cache_bytes(d, after_prefill.cache, plan.batch);
  s.kv_bytes_at_end = cache_bytes(d, run.cache, plan.batch);
  // A cache that follows the tokens holds prompt + generated - 1 positions (the last token is never fed back).
  s.cache_preallocated = d.context_of(run.cache) != plan.prompt_tokens + plan.new_tokens - 1;
}

}  // namespace

GenerationPlan timed_plan(GenerationPlan p, const measure::TimingKnobs& timing, const DecoderKnobs& knobs,
                          const Decoder& decoder, std::vector<std::string>& notes) {
  p.warmup_runs = std::min(timing.warmup, kMaxWarmupGenerations);
  p.runs = timing.iterations;
  p.duration_s = timing.duration_s;
  if (const std::string note = set_lengths(p, knobs, decoder); !note.empty()) notes.push_back(note);
  return p;
}

std::string set_lengths(GenerationPlan& p, const DecoderKnobs& k, const Decoder& d) {
  const auto limit = d.max_positions();
  p.prompt_tokens = k.prompt_tokens.value_or(p.prompt ? p.prompt->size(1) : kDefaultPromptTokens);
  p.new_tokens = k.generate.value_or(kDefaultGenerate);
  bool shrunk = false;
  if (limit && !k.prompt_tokens && !p.prompt && p.prompt_tokens + p.new_tokens - 1 > *limit) {
    p.prompt_tokens = std::max<int64_t>(1, *limit / 2);
    shrunk = true;
  }
  if (limit && !k.generate && p.prompt_tokens + p.new_tokens - 1 > *limit) {
    p.new_tokens = std::max<int64_t>(1, *limit - p.prompt_tokens + 1);
    shrunk = true;
  }
  if (!shrunk) return {};
  return fmt::format("the model holds {} positions: {} prompt and {} generated tokens", *limit, p.prompt_tokens,
                     p.new_tokens);
}

void check_context(const Decoder& decoder, const GenerationPlan& plan) {
  const int64_t needed = plan.prompt_tokens + plan.new_tokens - 1;
  if (decoder.max_positions() && needed > *decoder.max_positions())
    throw InputError(decoder.path(),
                     fmt::format("holds {} positions (max_positions) and {} prompt + {} generated tokens need {}",
                                 *decoder.max_positions(), plan.prompt_tokens, plan.new_tokens, needed),
                     "give fewer prompt or generated tokens");
}

GenerationStats time_generation(Decoder& decoder, const GenerationPlan& plan, Progress& progress) {
  check_context(decoder, plan);
  GenerationStats s;
  s.form = form_name(decoder.form());
  s.batch = plan.batch;
  s.prompt_tokens = plan.prompt_tokens;
  s.new_tokens = plan.new_tokens;
  s.max_positions = decoder.max_positions();
  decoder.warm_decode_shape(plan.batch);  // before any prompt-shaped call, so decode steps get the cached kernel
  s.vocab = first_call(decoder, plan, s);
  if (plan.prompt) check_token_ids(*plan.prompt, s.vocab, plan.prompt_file);
  const torch::Tensor prompt = prompt_of(plan, s.vocab);
  {
    ProgressPhase phase(progress, "warm-up generations", uint64_t(plan.warmup_runs));
    for (int i = 0; i < plan.warmup_runs; ++i) {
      GenerationRun run = generate(decoder, prompt, plan.new_tokens);
      if (i > 0) s.warmup_ttft_ms.push_back(run.ttft_ms);  // run 0's prefill followed the zeros' one
      if (!run.step_ms.empty()) s.warmup_first_step_ms.push_back(run.step_ms.front());
      phase.advance();
    }
  }
  std::vector<double> ttft, tpot;
  GenerationRun last;
  ProgressPhase phase(progress, "timed generations", uint64_t(plan.runs.value_or(0)));
  const auto start = Clock::now();
  while (true) {
    const int done = int(ttft.size());
    if (plan.runs ? done >= *plan.runs : (done >= kMinRuns && seconds_since(start) >= plan.duration_s) || done >= kMaxRuns)
      break;
    throw_if_interrupted();
    last = generate(decoder, prompt, plan.new_tokens);
    ttft.push_back(last.ttft_ms);
    tpot.insert(tpot.end(), last.step_ms.begin(), last.step_ms.end());
    phase.advance();
  }
  s.runs = int(ttft.size());
  s.ttft_ms = stats::summarize(ttft);
  if (!tpot.empty()) s.tpot_ms = stats::summarize(tpot);  // one generated token: TTFT alone
  s.prefill_tokens_per_s = s.ttft_ms.p50 > 0 ? 1000.0 * double(plan.batch * plan.prompt_tokens) / s.ttft_ms.p50 : 0;
  s.decode_tokens_per_s = s.tpot_ms.p50 > 0 ? 1000.0 * double(plan.batch) / s.tpot_ms.p50 : 0;
  s.tokens = last.tokens;
  record_cache(decoder, plan, last, s);
  return s;
}

}  // namespace lite::llm

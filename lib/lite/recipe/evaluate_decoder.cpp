// lite run on a decoder (a model whose forward takes a KV cache, docs/llm.md): the final artifact judged against the
// frozen original in the decoder's terms, as lite quantize and lite prune judge one: next-token agreement and, on
// real token ids, perplexity (teacher-forced on the evaluation's tokens), then time to first token, time per output
// token and decode tokens/s, the two decoders timed in turn twice (each keeping its faster round, so a slow moment of
// the machine falls on one round of one of them, not on the ratio). The recipe's "evaluate" object holds lite
// profile's option keys: eval (int64 token ids), threads, warmup, duration_s, iterations, prompt_tokens, generate.
#include <torch/script.h>

#include <fmt/format.h>

#include "lite/llm/decoder.hpp"
#include "lite/llm/generation_timing.hpp"
#include "lite/llm/token_data.hpp"
#include "lite/llm/token_quality.hpp"
#include "lite/model/load.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/recipe/runner_internal.hpp"

namespace lite::recipe::detail {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kScoreBatch = 4;
constexpr int kRounds = 2;

// Each decoder keeps its faster round.
void keep_faster(prune::DecoderFigures& f, const llm::GenerationStats& s) {
  if (f.decode_tokens_per_s < s.decode_tokens_per_s) prune::fill_speed(f, s);
}

uint64_t file_bytes(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : uint64_t(n);
}

}  // namespace

bool is_decoder_recipe(const Recipe& recipe) {
  const model::LoadedModel m = model::load_model(recipe.model);
  return llm::takes_kv_cache(m.module);
}

void check_decoder_evaluation(const Recipe& recipe) {
  const auto o = read_options<profile::ProfileOptions>(recipe.evaluate, "evaluate.");
  under_prefix("evaluate.", [&] {
    llm::validate(o.decoder);
    if (o.timing.duration_s <= 0)
      throw OptionError("duration_s", fmt::format("must be > 0, got {}", o.timing.duration_s), "give seconds, e.g. 2");
  });
}

DecoderEvaluation evaluate_decoder(const Recipe& recipe, const fs::path& baseline, const std::string& candidate,
                                   Progress& progress) {
  const auto o = read_options<profile::ProfileOptions>(recipe.evaluate, "evaluate.");
  set_intra_op_threads(o.timing.threads);
  model::LoadedModel source = model::load_model(recipe.model);
  const std::optional<int64_t> positions = llm::Decoder(source.module, recipe.model.string()).max_positions();
  model::LoadedModel original_file = model::load_model(baseline);
  model::LoadedModel final_file = model::load_model(candidate);
  llm::Decoder original(original_file.module, baseline.string(), positions);
  llm::Decoder final_model(final_file.module, candidate, positions);

  DecoderEvaluation e;
  e.threads = at::get_num_threads();
  e.original.file_bytes = file_bytes(baseline);
  e.final_model.file_bytes = file_bytes(candidate);
  const int64_t vocab = original.prefill(torch::zeros({1, 1}, torch::kInt64)).last_logits.size(-1);
  const llm::TokenData data = llm::load_token_data(o.eval, std::nullopt, vocab, positions);
  const llm::ReferenceTokens ref = llm::score_reference(original, data.tokens, kScoreBatch, progress);
  const llm::TokenQuality q = llm::score_candidate(final_model, data.tokens, kScoreBatch, ref, progress);
  e.quality_data = data.name;
  e.real_tokens = data.real;
  e.scored_tokens = ref.scored_tokens;
  e.final_model.agreement = q.agreement;
  if (data.real) e.original.perplexity = ref.perplexity, e.final_model.perplexity = q.perplexity;

  measure::TimingKnobs per_round = o.timing;
  per_round.duration_s = o.timing.duration_s / kRounds;
  const llm::GenerationPlan plan = llm::timed_plan({}, per_round, o.decoder, original, e.notes);
  llm::check_context(original, plan);
  e.prompt_tokens = plan.prompt_tokens;
  e.generated_tokens = plan.new_tokens;
  progress.announce(fmt::format("lite run: timing the original decoder and the final one in turn, {} rounds: {} prompt "
                                "tokens, {} generated, about {:.0f} s each", kRounds, plan.prompt_tokens,
                                plan.new_tokens, o.timing.duration_s));
  measure::LoadWatch load(e.threads);
  for (int round = 0; round < kRounds; ++round) {
    keep_faster(e.original, llm::time_generation(original, plan, progress));
    keep_faster(e.final_model, llm::time_generation(final_model, plan, progress));
  }
  e.load = load.result();
  return e;
}

}  // namespace lite::recipe::detail

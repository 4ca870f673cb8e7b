// lite quantize on a decoder (docs/llm.md "Quantizing a decoder"): every weight mode built by its scheme as for any
// model, then judged on the decoder's terms (next-token agreement with frozen float on every scored position, and
// perplexity on --eval token ids) and timed as it serves (time to first token, time per output token). auto keeps
// the mode with the most decode tokens per second among those within the tolerance (a perplexity increase in %, or
// without token data the share of positions that changed their greedy token, in %).
#include "lite/quantize/decoder_quantize.hpp"

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/llm/generate.hpp"
#include "lite/llm/generation_timing.hpp"
#include "lite/llm/kv_formats.hpp"
#include "lite/llm/kv_whatif.hpp"
#include "lite/llm/token_data.hpp"
#include "lite/llm/token_quality.hpp"
#include "lite/measure/frozen_float.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/module_bytes.hpp"
#include "lite/model/torch_environment.hpp"

namespace lite::quantize {

namespace {

constexpr double kDefaultDecoderTolerance = 1.0;  // % perplexity (or % of positions changed)
constexpr int64_t kScoreBatch = 4;

llm::GenerationPlan timing_plan(const QuantizeOptions& o, const llm::Decoder& d, QuantizeResult& r) {
  return llm::timed_plan({}, o.timing, o.decoder, d, r.notes);
}

void fill_speed(DecoderCandidate& c, const llm::GenerationStats& s, const DecoderCandidate& reference) {
  c.ttft_p50_ms = s.ttft_ms.p50;
  c.tpot_p50_ms = s.tpot_ms.count ? s.tpot_ms.p50 : 0;
  c.decode_tokens_per_s = s.decode_tokens_per_s;
  if (c.ttft_p50_ms > 0) c.ttft_speedup = reference.ttft_p50_ms / c.ttft_p50_ms;
  if (c.tpot_p50_ms > 0) c.decode_speedup = reference.tpot_p50_ms / c.tpot_p50_ms;
}

// One mode: built by its scheme, loaded back, judged and timed; a mode that fails is the candidate's problem (auto)
// or the run's error (an explicit mode).
DecoderCandidate try_mode(Context& c, const ModeEntry& mode, const DecoderRun& run, bool asked, Built* kept) {
  DecoderCandidate cand;
  cand.mode = mode.name;
  try {
    const Plan plan = make_plan(run.result.layers, mode, run.result.engine, c.o.skip, c.o.only, {}, c.source.file_bytes);
    Built built = build(c, mode, plan, /*decoder=*/true);
    c.spend("build", mode.name, built.build_s);
    cand.file_bytes = built.bytes;
    llm::Decoder decoder(built.module, c.source.path.string() + " (" + mode.name + ")", run.max_positions);
    const llm::TokenQuality q = timed(c, "evaluation", mode.name, [&] {
      return llm::score_candidate(decoder, run.data.tokens, kScoreBatch, run.reference_tokens, c.progress);
    });
    cand.agreement = q.agreement;
    if (run.data.real) cand.perplexity = q.perplexity;
    cand.quality_loss_pct = run.data.real ? 100 * (q.perplexity / run.reference_tokens.perplexity - 1) : 100 * (1 - q.agreement);
    fill_speed(cand, timed(c, "timing", mode.name, [&] { return llm::time_generation(decoder, run.plan, c.progress); }),
               run.decoder_result.reference);
    *kept = std::move(built);
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    if (const std::string lack = asked ? missing_kernels(mode) : ""; !lack.empty())
      throw InputError(c.source.path.string(), fmt::format("{} quantization fails on this CPU: {} (its decoder fails "
                                                           "where frozen float runs)", mode.name, lack),
                       "try another {mode}, or unset ONEDNN_MAX_CPU_ISA where it caps oneDNN below the CPU");
    if (asked) throw;
    cand.problem = e.what();
  } catch (const std::exception& e) {
    if (asked) throw InputError(c.source.path.string(), fmt::format("{} mode failed: {}", mode.name, e.what()),
                                "try another {mode}");
    cand.problem = e.what();
  }
  return cand;
}

// The chosen mode: the asked one, or auto's fastest decoder within the tolerance (else the one that lost least).
int choose(std::vector<DecoderCandidate>& cands, double tolerance, bool explicit_mode) {
  int best = -1;
  for (size_t i = 0; i < cands.size(); ++i) {
    auto& c = cands[i];
    if (!c.problem.empty()) continue;
    c.meets_tolerance = c.quality_loss_pct <= tolerance;
    if (explicit_mode) return int(i);
  }
  for (size_t i = 0; i < cands.size(); ++i)
    if (cands[i].problem.empty() && cands[i].meets_tolerance &&
        (best < 0 || cands[i].decode_tokens_per_s > cands[size_t(best)].decode_tokens_per_s))
      best = int(i);
  if (best >= 0) return best;
  for (size_t i = 0; i < cands.size(); ++i)
    if (cands[i].problem.empty() && (best < 0 || cands[i].quality_loss_pct < cands[size_t(best)].quality_loss_pct))
      best = int(i);
  return best;
}

void write_decoder_artifact(Context& c, const DecoderCandidate& chosen, const Built& built, DecoderRun& run) {
  model::ArtifactInfo info;
  info.transform = "quantize";
  info.command_line = c.run_context.command_line;
  info.details = {{"mode", chosen.mode}, {"requested_mode", run.result.requested_mode}, {"engine", run.result.engine},
                  {"decoder", {{"form", run.decoder_result.form}}}, {"scheme", built.details}};
  info.figures = {{"size_bytes", {{"before", c.source.file_bytes}, {"after", chosen.file_bytes}}},
                  {"quality", {{"agreement", chosen.agreement}, {"perplexity", chosen.perplexity.value_or(-1)},
                               {"float_perplexity", run.decoder_result.reference.perplexity.value_or(-1)},
                               {"data", run.decoder_result.quality_data}}}};
  const auto out = output_path(c.o, find_mode(chosen.mode).tag);
  throw_if_interrupted();  // the last moment a Ctrl-C leaves every file untouched
  timed(c, "write", "", [&] { model::save_artifact(model::deserialize(built.file), out, c.source, info); });
  run.result.output = out.string();
  run.result.output_bytes = std::filesystem::file_size(out);
}

// The what-if's plan: its limit ({kv_what_if_seconds}, under {budget_s} at most half of what is left) and what set it.
llm::KvWhatIfPlan kv_plan(const Context& c) {
  llm::KvWhatIfPlan plan;
  plan.limit_s = llm::kv_what_if_limit_s(c.o.kv_what_if_seconds, c.remaining_s());
  plan.limit_from = plan.limit_s < c.o.kv_what_if_seconds ? "budget_s" : "kv_what_if_seconds";
  return plan;
}

// The chosen mode's cache quantized between steps (docs/llm.md "KV-cache what-if"): the bytes a token of context
// would take and what that costs in tokens, on the same data the modes were judged on, within its time limit; with
// {kv_what_if} off, the cache's bytes per token alone, from one prefill.
void kv_what_if(Context& c, const DecoderCandidate& chosen, Built& built, DecoderRun& run) {
  llm::Decoder served(built.module, c.source.path.string() + " (" + chosen.mode + ")", run.max_positions);
  if (served.form() == llm::CacheForm::stateless) {
    run.result.notes.push_back("KV-cache what-if: none, the decoder is stateless (no cache to quantize)");
    return;
  }
  if (!c.o.kv_what_if) {
    run.decoder_result.kv_cache = llm::kv_cache_layout_only(served, run.data.tokens, chosen.mode);
    return;
  }
  const llm::KvWhatIfPlan plan = kv_plan(c);
  const int64_t rows = std::min(plan.max_sequences, run.data.tokens.size(0));
  c.progress.announce(fmt::format(
      "lite quantize: KV-cache what-if on {}: {} sequence{} decoded with the cache as returned and in {} simulated "
      "formats, up to about {:.0f} s ({}; {{kv_what_if}} skips it)",
      chosen.mode, rows, rows == 1 ? "" : "s", llm::kv_formats().size(), plan.limit_s,
      plan.limit_from == "budget_s" ? "half of what {budget_s} leaves" : "{kv_what_if_seconds}"));
  run.decoder_result.kv_cache = timed(c, "KV-cache what-if", chosen.mode, [&] {
    return llm::kv_cache_what_if(served, run.data.tokens, run.data.real, chosen.mode, c.progress, plan);
  });
}

}  // namespace

bool is_decoder_run(const QuantizeOptions& o, const torch::jit::Module& module) {
  return o.decoder.given() || llm::takes_kv_cache(module);
}

void refuse_prefill_method(const torch::jit::Module& module, const std::string& path) {
  if (module.find_method("prefill"))
    throw InputError(path, "prefills through a prefill method (a traced decoder), and quantization rewrites forward alone",
                     "export the decoder scripted, with forward taking an empty cache (docs/llm.md)");
}

void run_decoder(Context& c, const ModeEntry& requested, QuantizeResult& r) {
  validate_decoder(c.o);
  refuse_prefill_method(c.source.module, c.source.path.string());
  DecoderRun run{r, {}, {}, {}, {}, {}};
  run.decoder_result.reference.mode = "float32";
  const DecoderReference* given = c.decoder_reference;
  torch::jit::Module float_module = given ? given->frozen : timed(c, "freeze", "float", [&] {
    return measure::frozen_float(c.source.module, {});
  }).module;
  const std::optional<int64_t> positions = llm::Decoder(c.source.module, c.source.path.string()).max_positions();
  llm::Decoder reference(float_module, c.source.path.string(), positions);
  run.decoder_result.form = llm::form_name(reference.form());
  run.max_positions = positions;
  run.plan = timing_plan(c.o, reference, r);
  // the data first (a bad {eval} fails before any timing); one token's logits tell the vocabulary
  const int64_t vocab = reference.prefill(torch::zeros({1, 1}, torch::kInt64)).last_logits.size(-1);
  run.data = given ? given->data : llm::load_token_data(c.o.eval, c.o.eval_samples, vocab, reference.max_positions());
  const llm::GenerationStats float_run = given ? given->timing : timed(c, "timing", "float", [&] {
    return llm::time_generation(reference, run.plan, c.progress);
  });
  run.reference_tokens = given ? given->tokens : timed(c, "evaluation", "float", [&] {
    return llm::score_reference(reference, run.data.tokens, kScoreBatch, c.progress);
  });
  auto& ref = run.decoder_result.reference;
  ref.file_bytes = c.source.file_bytes;
  if (run.data.real) ref.perplexity = run.reference_tokens.perplexity;
  fill_speed(ref, float_run, ref);
  run.decoder_result.quality_data = run.data.name;
  run.decoder_result.scored_tokens = run.reference_tokens.scored_tokens;
  run.decoder_result.prompt_tokens = run.plan.prompt_tokens;
  run.decoder_result.generated_tokens = run.plan.new_tokens;

  std::map<std::string, Built> built;
  const Environment& env = cpu_rule_environment();
  for (const ModeEntry* mode : modes_to_try(requested)) {
    std::string problem = mode->scheme->needs_calibration() ? "needs activation calibration; a decoder takes the weight modes"
                          : requested.scheme ? "" : mode->scheme->cpu_problem(env);
    if (!problem.empty()) {
      DecoderCandidate skipped;
      skipped.mode = mode->name;
      skipped.problem = problem;
      run.decoder_result.candidates.push_back(skipped);
      continue;
    }
    Built kept;
    run.decoder_result.candidates.push_back(try_mode(c, *mode, run, requested.scheme != nullptr, &kept));
    if (run.decoder_result.candidates.back().problem.empty()) built.emplace(mode->name, std::move(kept));
  }
  const double tolerance = c.o.tolerance.value_or(kDefaultDecoderTolerance);
  const int index = choose(run.decoder_result.candidates, tolerance, requested.scheme != nullptr);
  if (index < 0) throw InputError(c.source.path.string(), "no quantization mode works on this decoder", "see the candidates' problems in --json");
  DecoderCandidate& chosen = run.decoder_result.candidates[size_t(index)];
  chosen.chosen = true;
  r.mode = chosen.mode;
  r.tolerance = tolerance;
  r.tolerance_met = chosen.meets_tolerance;
  r.slower = chosen.decode_speedup > 0 && chosen.decode_speedup < 1;
  if (!r.tolerance_met) r.gates.fail("tolerance");
  if (r.slower && !c.o.allow_slower) r.gates.fail("speed");
  kv_what_if(c, chosen, built.at(chosen.mode), run);
  if (!c.o.dry_run) write_decoder_artifact(c, chosen, built.at(chosen.mode), run);
  r.decoder = run.decoder_result;
}

}  // namespace lite::quantize

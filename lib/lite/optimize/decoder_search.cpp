// lite optimize on a decoder with an LLM request trace (decoder_search.hpp), the torch half: frozen float measured
// as the reference, each weight mode built by lite quantize and measured once (quality, decode speed, the KV-cache
// what-if, the prefill grid fitted), every (mode, KV format) pair within the quality budget sized by the prefix
// replay (decoder_sizing.cpp), and the choice written with the whole search in its lite.json.
#include <torch/script.h>

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "lite/cache/prefix/prefill_table.hpp"
#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"
#include "lite/llm/generation_timing.hpp"
#include "lite/llm/kv_whatif.hpp"
#include "lite/llm/prefill_grid.hpp"
#include "lite/llm/token_data.hpp"
#include "lite/llm/token_quality.hpp"
#include "lite/measure/frozen_float.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/load.hpp"
#include "lite/optimize/decoder_search_internal.hpp"
#include "lite/optimize/verb.hpp"
#include "lite/quantize/decoder_quantize.hpp"
#include "lite/quantize/quantize.hpp"

namespace lite::optimize::detail {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kScoreBatch = 4;
constexpr int64_t kGridContextWithoutLimit = 2048;  // positions a model that states none is measured over

struct SearchContext {
  const OptimizeOptions& o;
  const RunContext& run_context;
  Progress& progress;
  model::LoadedModel source;
  std::optional<int64_t> positions;
  int64_t vocab = 0;
  llm::TokenData data;
  fs::path folder;
  std::map<std::string, llm::KvWhatIf> kv;  // per measured mode
  std::optional<quantize::DecoderReference> reference;  // frozen float as measured: every mode's quantize run reuses it
};

void fit_prefill(SearchContext& c, llm::Decoder& d, DecoderWeights& w) {
  const int64_t context = d.max_positions().value_or(kGridContextWithoutLimit);
  llm::PrefillGridPlan plan = llm::prefill_grid_defaults(context);
  plan.vocab = c.vocab;
  const auto fit = cache::prefix::fit_prefill_model(llm::measure_prefill_grid(d, plan, context, c.progress));
  w.prefill = fit.model;
  w.prefill_fit_error = fit.max_relative_error;
}

DecoderWeights measure_float(SearchContext& c, llm::Decoder& reference, const torch::jit::Module& frozen,
                             const llm::ReferenceTokens& tokens) {
  const auto start = Clock::now();
  DecoderWeights w;
  w.mode = "float";
  w.status = "measured";
  w.file_bytes = c.source.file_bytes;
  if (c.data.real) w.perplexity = tokens.perplexity;
  llm::GenerationPlan plan;
  plan.warmup_runs = std::min(c.o.warmup, llm::kMaxWarmupGenerations);
  plan.duration_s = c.o.duration_s;
  llm::set_lengths(plan, {}, reference);
  const llm::GenerationStats stats = llm::time_generation(reference, plan, c.progress);
  c.reference = quantize::DecoderReference{frozen, stats, c.data, tokens};
  w.tpot_p50_ms = stats.tpot_ms.count ? stats.tpot_ms.p50 : 0;
  w.decode_tokens_per_s = stats.decode_tokens_per_s;
  c.kv["float"] = llm::kv_cache_what_if(reference, c.data.tokens, c.data.real, "float", c.progress);
  fit_prefill(c, reference, w);
  w.measure_s = seconds_since(start);
  return w;
}

// One mode built by lite quantize into the work folder, judged there against frozen float as the search measured
// it (not frozen, timed and scored again per mode); its prefill grid only when its quality is within the budget
// (or the search is exhaustive).
DecoderWeights measure_mode(SearchContext& c, const std::string& mode, double budget) {
  DecoderWeights w;
  w.mode = mode;
  w.artifact = (c.folder / (mode + ".pt")).string();
  quantize::QuantizeOptions q;
  q.model = c.o.model;
  q.output = w.artifact;
  q.mode = mode;
  q.eval = c.o.eval;
  q.tolerance = 100;          // judged here, against the search's budget
  q.allow_slower = true;
  q.allow_noisy = true;
  q.write_calib_json = false;
  q.timing = {std::min(c.o.warmup, 3), {}, c.o.duration_s, c.o.threads};
  const auto start = Clock::now();
  try {
    quantize::validate(q);
    const quantize::QuantizeResult qr = quantize::run(q, c.progress, c.run_context, *c.reference);
    w.build_s = seconds_since(start);
    const quantize::DecoderCandidate& cand = qr.decoder->candidates.front();
    w.quality_loss_pct = cand.quality_loss_pct;
    w.agreement = cand.agreement;
    w.perplexity = cand.perplexity;
    w.tpot_p50_ms = cand.tpot_p50_ms;
    w.decode_tokens_per_s = cand.decode_tokens_per_s;
    w.file_bytes = cand.file_bytes;
    if (qr.decoder->kv_cache) c.kv[mode] = *qr.decoder->kv_cache;
    if (w.quality_loss_pct > budget && !c.o.exhaustive) {
      w.status = "over budget";
      w.reason = fmt::format("its weights alone lose {:.2f}% (budget {:g}%)", w.quality_loss_pct, budget);
      return w;
    }
    model::LoadedModel built = model::load_model(w.artifact);
    llm::Decoder d(built.module, w.artifact, c.positions);
    fit_prefill(c, d, w);
    w.status = "measured";
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    w.status = "failed";
    w.reason = e.what();
  }
  w.measure_s = seconds_since(start) - w.build_s;
  return w;
}

DecoderChoice pair_of(const DecoderWeights& w, const std::string& kv_format, double bytes_per_token, double loss) {
  DecoderChoice p;
  p.mode = w.mode;
  p.kv_format = kv_format;
  p.kv_bytes_per_token = bytes_per_token;
  p.quality_loss_pct = loss;
  return p;
}

// Quality of weights and cache together against frozen float with its own cache: perplexity ratios multiply;
// without real tokens, agreements do.
double combined_loss(const DecoderWeights& w, const llm::KvWhatIf& kv, const llm::KvFormatQuality& f, bool real) {
  if (real) return 100 * ((1 + w.quality_loss_pct / 100) * (f.perplexity / kv.perplexity) - 1);
  return 100 * (1 - (1 - w.quality_loss_pct / 100) * f.agreement);
}

void size_pairs(SearchContext& c, DecoderSearch& s) {
  for (const DecoderWeights& w : s.weights) {
    if (w.mode == "float" && std::find(c.o.modes.begin(), c.o.modes.end(), "float") == c.o.modes.end()) continue;
    const auto kv = c.kv.find(w.mode);
    if (w.status != "measured" || kv == c.kv.end()) {
      s.choices.push_back(pair_of(w, "-", 0, w.quality_loss_pct));
      s.choices.back().status = w.status;
      continue;
    }
    std::vector<DecoderChoice> pairs;
    pairs.push_back(pair_of(w, kv->second.layout.dtype, kv->second.layout.bytes_per_token, w.quality_loss_pct));
    for (const auto& f : kv->second.formats)
      pairs.push_back(pair_of(w, f.format, f.bytes_per_token, combined_loss(w, kv->second, f, c.data.real)));
    for (DecoderChoice& p : pairs) {
      throw_if_interrupted();
      if (p.quality_loss_pct > s.budget_pct && !c.o.exhaustive) p.status = "over budget";
      else size_prefix_cache(c.o, s, *w.prefill, p);
      s.choices.push_back(p);
    }
  }
}

void write_choice(SearchContext& c, const DecoderSearch& s, torch::jit::Module& frozen, OptimizeResult& r) {
  const DecoderChoice& ch = s.choices[*s.chosen];
  model::ArtifactInfo info;
  info.transform = verb().name;
  info.command_line = c.run_context.command_line;
  info.details = {{"target", r.target.describe()},
                  {"chosen", {{"mode", ch.mode}, {"kv_format", ch.kv_format},
                              {"kv_bytes_per_token", ch.kv_bytes_per_token}, {"policy", ch.policy},
                              {"cache_bytes", ch.cache_bytes}, {"capacity_tokens", ch.capacity_tokens}}},
                  {"why_kv_format", "the KV format is the serving engine's setting: the artifact's weights are the "
                                    "mode's, its cache what the model returns"},
                  {"decoder_search", s}};
  info.figures = {{"quality_loss_pct", ch.quality_loss_pct}, {"token_hit_ratio", ch.token_hit_ratio},
                  {"ttft_p50_ms", ch.ttft_p50_ms}, {"ttft_p99_ms", ch.ttft_p99_ms}};
  const fs::path out = output_path(c.o);
  throw_if_interrupted();
  if (ch.mode == "float") {
    model::save_artifact(frozen, out, c.source, info);
  } else {
    model::LoadedModel built = model::load_model(c.folder / (ch.mode + ".pt"));
    model::save_artifact(built.module, out, built, info);
  }
  r.output = out.string();
}

}  // namespace

void run_decoder_search(const OptimizeOptions& o, Progress& progress, const RunContext& context, OptimizeResult& r) {
  SearchContext c{o, context, progress, model::load_model(o.model), std::nullopt, 0, {}, work_dir(o) / "decoder", {}, {}};
  if (!llm::takes_kv_cache(c.source.module))
    throw InputError(o.model.string(), "is not a decoder with a KV cache (forward(ids, cache), or a prefill method), "
                     "which an LLM request trace is replayed against", "export it with its cache (docs/llm.md)");
  quantize::refuse_prefill_method(c.source.module, o.model.string());  // every mode the search weighs is quantized
  fs::create_directories(c.folder);
  c.positions = llm::Decoder(c.source.module, o.model.string()).max_positions();
  DecoderSearch s;
  const cache::prefix::TraceFacts facts = read_trace_facts(o);
  s.trace = facts.path;
  s.trace_format = facts.format;
  s.requests = facts.requests;
  s.prompt_tokens = facts.prompt_tokens;
  s.distinct_blocks = facts.distinct_blocks;
  s.block_tokens = facts.block_tokens;
  s.max_positions = c.positions;
  s.percentile = r.target.key == "target_p50_ms" ? "p50" : "p99";
  s.target_ms = r.target.value;
  s.budget_pct = r.accuracy_budget;
  s.policies = prefix_policies(o);

  measure::FrozenFloat frozen = measure::frozen_float(c.source.module, {});
  llm::Decoder reference(frozen.module, o.model.string(), c.positions);
  c.vocab = reference.prefill(torch::zeros({1, 1}, torch::kInt64)).last_logits.size(-1);
  c.data = llm::load_token_data(o.eval, std::nullopt, c.vocab, c.positions);
  s.quality_data = c.data.name;
  const llm::ReferenceTokens tokens = llm::score_reference(reference, c.data.tokens, kScoreBatch, progress);
  s.weights.push_back(measure_float(c, reference, frozen.module, tokens));
  for (const auto& mode : o.modes) {
    if (mode == "float") continue;
    if (mode == "static") {
      DecoderWeights skipped;
      skipped.mode = mode;
      skipped.status = "skipped";
      skipped.reason = "needs activation calibration; a decoder takes the weight modes";
      s.weights.push_back(skipped);
      continue;
    }
    s.weights.push_back(measure_mode(c, mode, s.budget_pct));
  }
  const llm::KvWhatIf& float_kv = c.kv.at("float");
  s.cache_dtype = float_kv.layout.dtype;
  s.cache_bytes = cache_sizes_in_bytes(o, facts, float_kv.layout.bytes_per_token);
  size_pairs(c, s);
  choose_pair(s);
  r.eval_source = c.data.name;
  r.metric = c.data.real ? "perplexity increase %" : "% of next tokens changed";
  r.decoder = s;
  if (s.chosen) {
    write_choice(c, s, frozen.module, r);
  } else {
    r.gates.fail("target");
  }
  if (c.positions && facts.requests && double(facts.prompt_tokens) / double(facts.requests) > double(*c.positions))
    r.notes.push_back(fmt::format("the trace's mean prompt ({:.0f} tokens) is beyond the model's {} positions: TTFT "
                                  "there is the prefill model fitted on the model's own lengths, extrapolated",
                                  double(facts.prompt_tokens) / double(facts.requests), *c.positions));
}

}  // namespace lite::optimize::detail

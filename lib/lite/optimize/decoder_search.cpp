// lite optimize on a decoder with an LLM request trace (decoder_search.hpp), the torch half: frozen float measured
// as the reference, each weight mode built by lite quantize and screened (quality, a short decode timing, half the
// prefill grid timed once; the KV formats' losses predicted from float's what-if), every (mode, KV format) pair
// within the quality budget sized by the prefix replay (decoder_sizing.cpp), then what the screen left open settled
// (fragile prefill fits refitted, the chosen format's loss measured, a tie on decode speed raced), and the choice
// written with the whole search in its lite.json. --exhaustive measures every mode fully and settles nothing.
#include <torch/script.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>

#include "lite/cache/prefix/prefill_table.hpp"
#include "lite/core/atomic_file.hpp"
#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/stats.hpp"
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
#include "lite/optimize/outputs.hpp"
#include "lite/optimize/search_internal.hpp"
#include "lite/optimize/verb.hpp"
#include "lite/quantize/decoder_quantize.hpp"
#include "lite/quantize/quantize.hpp"

namespace lite::optimize::detail {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kScoreBatch = 4;
constexpr int64_t kGridContextWithoutLimit = 2048;  // positions a model that states none is measured over
constexpr double kRaceBand = 0.15;     // screened decode speeds this close may be a short timing's noise
constexpr double kRaceSettled = 0.05;  // decode speeds this close are equal for the choice
constexpr double kFitMargin = 0.05;    // a screened prefill fit's TTFT this close to the target may be its error

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

// The search times decode speed briefly, and further only where it breaks a tie (race_tied_modes); the exhaustive
// grid times every mode for the whole --duration.
double timing_s(const OptimizeOptions& o) { return o.exhaustive ? o.duration_s : o.screen_duration_s; }
std::string timing_of(const OptimizeOptions& o) { return o.exhaustive ? "full" : "screened"; }

// The screen's grid: every other point of the full grid (alternating along both axes, so every length stays),
// each timed once after its untimed call: a sixth of the calls. A grid cut to its corners fits the model
// differently, not just more noisily: on a 4-layer decoder here six points (3 lengths x the least and most cached)
// put c 20-60% above the full grid's and TTFT p99 20% above.
llm::PrefillGridPlan screen_grid(llm::PrefillGridPlan full) {
  full.repeats = 1;
  full.checkerboard = true;
  return full;
}

llm::PrefillGridPlan grid_plan(const SearchContext& c, llm::Decoder& d, bool full) {
  llm::PrefillGridPlan plan = llm::prefill_grid_defaults(d.max_positions().value_or(kGridContextWithoutLimit));
  if (!full) plan = screen_grid(plan);
  plan.vocab = c.vocab;
  return plan;
}

// `settled` may end a full grid before its last pass (confirm_prefill); the fit's passes are recorded.
void fit_prefill(SearchContext& c, llm::Decoder& d, DecoderWeights& w, bool full, const llm::GridSettled& settled = {}) {
  const int64_t context = d.max_positions().value_or(kGridContextWithoutLimit);
  const llm::PrefillGridPlan plan = grid_plan(c, d, full);
  int passes = plan.repeats;
  const llm::GridSettled counted = [&](const cache::prefix::PrefillTable& so_far, const std::vector<double>& totals) {
    if (!settled(so_far, totals)) return false;
    passes = int(totals.size());
    return true;
  };
  const auto table = llm::measure_prefill_grid(d, plan, context, c.progress, settled ? counted : llm::GridSettled{});
  const auto fit = cache::prefix::fit_prefill_model(table);
  w.prefill = fit.model;
  w.prefill_fit_error = fit.max_relative_error;
  w.prefill_grid = full ? "full" : "screen";
  w.prefill_points = fit.points;
  w.prefill_passes = passes;
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
  plan.duration_s = timing_s(c.o);
  llm::set_lengths(plan, {}, reference);
  const llm::GenerationStats stats = llm::time_generation(reference, plan, c.progress);
  c.reference = quantize::DecoderReference{frozen, stats, c.data, tokens};
  w.tpot_p50_ms = stats.tpot_ms.count ? stats.tpot_ms.p50 : 0;
  w.decode_tokens_per_s = stats.decode_tokens_per_s;
  w.timing = timing_of(c.o);
  c.kv["float"] = llm::kv_cache_what_if(reference, c.data.tokens, c.data.real, "float", c.progress);
  fit_prefill(c, reference, w, c.o.exhaustive);
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
  q.kv_what_if = c.o.exhaustive;  // the search predicts the KV formats' losses from float's (confirm_kv_quality)
  q.timing = {std::min(c.o.warmup, 3), {}, timing_s(c.o), c.o.threads};
  w.timing = timing_of(c.o);
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
    fit_prefill(c, d, w, c.o.exhaustive);
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
    const llm::KvWhatIf& judged = kv->second.skipped ? c.kv.at("float") : kv->second;
    for (const auto& f : judged.formats) {
      pairs.push_back(pair_of(w, f.format, f.bytes_per_token, combined_loss(w, judged, f, c.data.real)));
      pairs.back().quality_predicted = kv->second.skipped;
    }
    for (DecoderChoice& p : pairs) {
      throw_if_interrupted();
      if (p.quality_loss_pct > s.budget_pct && !c.o.exhaustive) p.status = "over budget";
      else size_prefix_cache(c.o, s, *w.prefill, p);
      s.choices.push_back(p);
    }
  }
}

DecoderWeights& weights_of(DecoderSearch& s, const std::string& mode) { return s.weights[weight_index(s, mode)]; }

// A measured mode loaded to run again: frozen float, or its artifact from the work folder. The decoder refers to
// the module, so the loaded artifact lives beside it.
struct LoadedDecoder {
  std::unique_ptr<model::LoadedModel> built;
  std::unique_ptr<llm::Decoder> decoder;
};

LoadedDecoder load_decoder(const SearchContext& c, const DecoderWeights& w, torch::jit::Module& frozen) {
  LoadedDecoder l;
  if (w.mode == "float") {
    l.decoder = std::make_unique<llm::Decoder>(frozen, c.o.model.string(), c.positions);
  } else {
    l.built = std::make_unique<model::LoadedModel>(model::load_model(w.artifact));
    l.decoder = std::make_unique<llm::Decoder>(l.built->module, w.artifact, c.positions);
  }
  return l;
}

// Whether a fit from `so_far` sizes every pair of `mode` beyond a fit error's reach: no size up to `largest_useful`
// where its TTFT is within `margin` of the target.
bool beyond_fit_error(SearchContext& c, DecoderSearch& s, const std::string& mode,
                      const cache::prefix::PrefillTable& so_far, double largest_useful, double margin) {
  const auto fit = cache::prefix::fit_prefill_model(so_far);
  std::vector<double> replayed;  // KV bytes per token: int8 and fp8 pairs hold the same blocks, so size alike
  for (const DecoderChoice& p : s.choices) {
    if (p.mode != mode || (p.status != "met" && p.status != "not reached")) continue;
    if (std::find(replayed.begin(), replayed.end(), p.kv_bytes_per_token) != replayed.end()) continue;
    replayed.push_back(p.kv_bytes_per_token);
    DecoderChoice again = p;
    size_prefix_cache(c.o, s, fit.model, again);
    if (size_a_fit_error_could_change(s, again, largest_useful, margin)) return false;
  }
  return true;
}

// The screen's prefill fits replaced by the full grid's one mode at a time, the most promising first (the mode
// whose fit error could bring a pair to the smallest size), its pairs sized again and the pair chosen again, until
// the choice rests on no screened fit that an error of kFitMargin could change. One at a time: a refit that moves the
// choice to a smaller cache leaves the others' screened fits unable to matter. A refit ends after any pass whose fit
// puts every pair of the mode beyond refit_margin of the target.
void confirm_prefill(SearchContext& c, DecoderSearch& s, torch::jit::Module& frozen) {
  if (c.o.exhaustive) return;
  while (true) {
    const double largest_useful = s.chosen ? s.choices[*s.chosen].cache_bytes : s.cache_bytes.back();
    std::optional<std::pair<size_t, std::string>> next;  // (first size a fit error could change, mode)
    for (const DecoderChoice& p : s.choices) {
      if (weights_of(s, p.mode).prefill_grid != "screen") continue;
      const auto at = size_a_fit_error_could_change(s, p, largest_useful, kFitMargin);
      if (!at || loses_a_tie_at_best(s, p, *at, kRaceBand)) continue;
      if (!next || *at < next->first) next = std::make_pair(*at, p.mode);
    }
    if (!next) return;
    DecoderWeights& w = weights_of(s, next->second);
    const auto start = Clock::now();
    const LoadedDecoder loaded = load_decoder(c, w, frozen);
    const int64_t context = loaded.decoder->max_positions().value_or(kGridContextWithoutLimit);
    const double screen_calls = double(llm::prefill_grid_points(grid_plan(c, *loaded.decoder, false), context).size());
    const double pass_calls = double(llm::prefill_grid_points(grid_plan(c, *loaded.decoder, true), context).size());
    fit_prefill(c, *loaded.decoder, w, true, [&](const cache::prefix::PrefillTable& so_far,
                                                  const std::vector<double>& totals) {
      const auto margin = refit_margin(totals, kFitMargin, screen_calls / pass_calls);
      return margin && beyond_fit_error(c, s, w.mode, so_far, largest_useful, *margin);
    });
    w.measure_s += seconds_since(start);
    s.refitted.push_back(w.mode);
    for (DecoderChoice& p : s.choices)
      if (p.mode == w.mode && (p.status == "met" || p.status == "not reached"))
        size_prefix_cache(c.o, s, *w.prefill, p);
    choose_pair(s);
  }
}

// The chosen pair's KV format judged on its own weights where its loss was predicted from float's what-if: that
// mode's predicted pairs get their measured losses (sized now if they come within the budget) and the pair is chosen
// again, until the choice rests on a measured quality.
void confirm_kv_quality(SearchContext& c, DecoderSearch& s, torch::jit::Module& frozen) {
  while (s.chosen && s.choices[*s.chosen].quality_predicted) {
    const std::string mode = s.choices[*s.chosen].mode;
    const DecoderWeights& w = weights_of(s, mode);
    const LoadedDecoder loaded = load_decoder(c, w, frozen);
    const llm::KvWhatIf& kv = c.kv[mode] =
        llm::kv_cache_what_if(*loaded.decoder, c.data.tokens, c.data.real, mode, c.progress);
    for (DecoderChoice& p : s.choices) {
      if (p.mode != mode || !p.quality_predicted) continue;
      p.quality_predicted = false;
      for (const auto& f : kv.formats)
        if (f.format == p.kv_format) p.quality_loss_pct = combined_loss(w, kv, f, c.data.real);
      if (p.quality_loss_pct > s.budget_pct) p.status = "over budget";
      else if (p.status == "over budget") size_prefix_cache(c.o, s, *w.prefill, p);
    }
    choose_pair(s);
  }
}

// A mode in the race: its decoder (on the work folder's artifact, or frozen float) and its speed per turn, the
// screen's first.
struct Racer {
  size_t weight = 0;  // into DecoderSearch::weights
  LoadedDecoder loaded;
  std::vector<double> speeds;
  double estimate() const { return stats::median(speeds); }
};

std::vector<Racer> line_up(SearchContext& c, const DecoderSearch& s, torch::jit::Module& frozen) {
  std::vector<Racer> racers;
  for (size_t w : tied_weights(s, kRaceBand)) {
    Racer r;
    r.weight = w;
    r.speeds = {s.weights[w].decode_tokens_per_s};
    r.loaded = load_decoder(c, s.weights[w], frozen);
    racers.push_back(std::move(r));
  }
  return racers;
}

// The screen's tie on decode speed timed further (DecoderRace), the modes in turn so that a drifting machine
// favours none; the racers' speeds become their turns' medians and the pair is chosen again.
void race_tied_modes(SearchContext& c, DecoderSearch& s, torch::jit::Module& frozen) {
  if (c.o.exhaustive || !s.chosen) return;
  std::vector<Racer> racers = line_up(c, s, frozen);
  if (racers.size() < 2) return;
  DecoderRace race;
  for (const Racer& r : racers) race.modes.push_back(s.weights[r.weight].mode);
  const auto start = Clock::now();
  llm::GenerationPlan plan;
  plan.duration_s = c.o.screen_duration_s;
  llm::set_lengths(plan, {}, *racers.front().loaded.decoder);
  std::vector<Racer> done;
  while (true) {
    plan.warmup_runs = race.turns == 0 ? std::min(c.o.warmup, llm::kMaxWarmupGenerations) : 0;  // a fresh load
    for (Racer& r : racers) r.speeds.push_back(llm::time_generation(*r.loaded.decoder, plan, c.progress).decode_tokens_per_s);
    ++race.turns;
    double lead = 0;
    for (const Racer& r : racers) lead = std::max(lead, r.estimate());
    for (auto it = racers.begin(); it != racers.end();) {
      if (it->estimate() >= (1 - kRaceSettled) * lead) { ++it; continue; }
      race.dropped.push_back(s.weights[it->weight].mode);
      done.push_back(std::move(*it));
      it = racers.erase(it);
    }
    if (racers.size() == 1) race.ended = "one left";
    else if (race.turns >= 2) race.ended = "settled";  // the rest are within kRaceSettled of the leader
    else if (seconds_since(start) >= c.o.duration_s) race.ended = "duration spent";
    if (!race.ended.empty()) break;
  }
  race.seconds = seconds_since(start);
  for (auto* group : {&racers, &done})
    for (const Racer& r : *group) {
      s.weights[r.weight].decode_tokens_per_s = r.estimate();
      s.weights[r.weight].timing = "raced";
    }
  s.race = race;
  choose_pair(s);
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
  const cache::prefix::TraceFacts facts = read_trace_facts(o);  // a bad line refused before the work folder exists
  fs::create_directories(c.folder);
  c.positions = llm::Decoder(c.source.module, o.model.string()).max_positions();
  DecoderSearch s;
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
    if (const std::string problem = mode_cpu_problem(o, mode); !problem.empty()) {
      s.weights.push_back({});
      s.weights.back().mode = mode;
      s.weights.back().status = "skipped";
      s.weights.back().reason = problem;
      continue;
    }
    s.weights.push_back(measure_mode(c, mode, s.budget_pct));
  }
  const llm::KvWhatIf& float_kv = c.kv.at("float");
  s.cache_dtype = float_kv.layout.dtype;
  s.cache_bytes = cache_sizes_in_bytes(o, facts, float_kv.layout.bytes_per_token);
  size_pairs(c, s);
  choose_pair(s);
  confirm_prefill(c, s, frozen.module);
  confirm_kv_quality(c, s, frozen.module);
  race_tied_modes(c, s, frozen.module);
  confirm_kv_quality(c, s, frozen.module);  // the race may choose another mode
  r.eval_source = c.data.name;
  r.metric = c.data.real ? "perplexity increase %" : "% of next tokens changed";
  r.decoder = s;
  if (s.chosen) {
    write_choice(c, s, frozen.module, r);
    if (!o.emit_recipe.empty()) {
      write_file_atomically(o.emit_recipe, emitted_decoder_recipe(r, o).dump(2) + "\n");
      r.emitted_recipe = o.emit_recipe.string();
    }
  } else {
    if (!o.emit_recipe.empty()) r.notes.push_back("no recipe emitted: nothing met the target");
    r.gates.fail("target");
  }
  if (c.positions && facts.requests && double(facts.prompt_tokens) / double(facts.requests) > double(*c.positions))
    r.notes.push_back(fmt::format("the trace's mean prompt ({:.0f} tokens) is beyond the model's {} positions: TTFT "
                                  "there is the prefill model fitted on the model's own lengths, extrapolated",
                                  double(facts.prompt_tokens) / double(facts.requests), *c.positions));
}

}  // namespace lite::optimize::detail

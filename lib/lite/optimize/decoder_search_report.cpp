// JSON and table views of lite optimize's decoder search (OptimizeResult::decoder): the weight modes as measured,
// then every (mode, KV format) pair with the prefix cache sized for the TTFT target. Torch-free.
#include <fmt/format.h>

#include "lite/cache/prefix/prefill_table.hpp"
#include "lite/core/text.hpp"
#include "lite/optimize/decoder_search_report.hpp"

namespace lite::optimize {

namespace {
nlohmann::json prefill_json(const std::optional<cache::prefix::PrefillModel>& m) {
  if (!m) return nullptr;
  return cache::prefix::prefill_model_json(*m);
}
}  // namespace

void to_json(nlohmann::json& j, const DecoderWeights& w) {
  j = {{"mode", w.mode}, {"status", w.status}, {"reason", w.reason}, {"artifact", w.artifact},
       {"quality_loss_pct", w.quality_loss_pct}, {"next_token_agreement", w.agreement},
       {"perplexity", w.perplexity ? nlohmann::json(*w.perplexity) : nlohmann::json(nullptr)},
       {"tpot_p50_ms", w.tpot_p50_ms}, {"decode_tokens_per_s", w.decode_tokens_per_s}, {"timing", w.timing},
       {"prefill_model", prefill_json(w.prefill)}, {"prefill_fit_max_error", w.prefill_fit_error},
       {"prefill_grid", w.prefill_grid}, {"prefill_points", w.prefill_points},
       {"prefill_passes", w.prefill_passes},
       {"file_bytes", w.file_bytes}, {"build_s", w.build_s}, {"measure_s", w.measure_s}};
}

void to_json(nlohmann::json& j, const DecoderChoice& c) {
  j = {{"mode", c.mode}, {"kv_format", c.kv_format}, {"kv_bytes_per_token", c.kv_bytes_per_token},
       {"quality_loss_pct", c.quality_loss_pct}, {"quality_predicted", c.quality_predicted}, {"status", c.status},
       {"policy", c.policy},
       {"cache_bytes", c.cache_bytes}, {"capacity_tokens", c.capacity_tokens}, {"token_hit_ratio", c.token_hit_ratio},
       {"ttft_p50_ms", c.ttft_p50_ms}, {"ttft_p99_ms", c.ttft_p99_ms}, {"ttft_by_size_ms", c.ttft_by_size_ms},
       {"feasible", c.feasible}, {"chosen", c.chosen}};
}

void to_json(nlohmann::json& j, const DecoderRace& r) {
  j = {{"modes", r.modes}, {"dropped", r.dropped}, {"turns", r.turns}, {"seconds", r.seconds}, {"ended", r.ended}};
}

void to_json(nlohmann::json& j, const DecoderSearch& s) {
  j = {{"trace", s.trace}, {"trace_format", s.trace_format}, {"requests", s.requests},
       {"prompt_tokens", s.prompt_tokens}, {"distinct_blocks", s.distinct_blocks}, {"block_tokens", s.block_tokens},
       {"max_positions", s.max_positions ? nlohmann::json(*s.max_positions) : nlohmann::json(nullptr)},
       {"quality_data", s.quality_data}, {"ttft_percentile", s.percentile}, {"target_ms", s.target_ms},
       {"quality_budget_pct", s.budget_pct}, {"policies", s.policies}, {"cache_dtype", s.cache_dtype},
       {"cache_bytes", s.cache_bytes}, {"weights", s.weights}, {"pairs", s.choices},
       {"chosen", s.chosen ? nlohmann::json(s.choices[*s.chosen]) : nlohmann::json(nullptr)},
       {"simulations", s.simulations}, {"race", s.race ? nlohmann::json(*s.race) : nlohmann::json(nullptr)},
       {"refitted", s.refitted}};
}

namespace {

report::Table weights_table(const DecoderSearch& s) {
  report::Table t{fmt::format("Decoder weights, judged on {}", s.quality_data),
                  {"weights", "size", "quality loss", "time/token ms", "decode tok/s", "prefill ms (512 new)", "status"},
                  {}};
  for (const auto& w : s.weights) {
    const bool measured = w.status == "measured" || w.status == "over budget";
    t.rows.push_back({w.mode, w.file_bytes ? format_bytes(double(w.file_bytes)) : "-",
                      measured ? fmt::format("{:.2f}%", w.quality_loss_pct) : "-",
                      measured ? format_ms(w.tpot_p50_ms) : "-",
                      measured ? fmt::format("{:.1f}", w.decode_tokens_per_s) : "-",
                      w.prefill ? format_ms(w.prefill->ms(0, 512)) : "-",
                      w.reason.empty() ? w.status : w.status + ": " + shorten(w.reason, 40)});
  }
  return t;
}

report::Table pairs_table(const DecoderSearch& s) {
  report::Table t{fmt::format("Weights x KV format: the smallest prefix cache meeting TTFT {} <= {} ms on {} ({} requests, "
                              "{}-token blocks)", s.percentile, s.target_ms, s.trace, s.requests, s.block_tokens),
                  {"weights", "KV format", "bytes/token", "quality loss", "cache", "tokens held", "policy", "hit ratio",
                   "TTFT p50", "TTFT p99", "verdict"},
                  {}};
  for (const auto& c : s.choices) {
    const bool sized = c.status == "met" || c.status == "not reached";
    t.rows.push_back({c.mode + (c.chosen ? " *" : ""), c.kv_format,
                      c.kv_bytes_per_token ? format_bytes(c.kv_bytes_per_token) : "-",
                      fmt::format("{:.2f}%", c.quality_loss_pct),
                      sized ? format_bytes(c.cache_bytes) : "-", sized ? fmt::format("{}", c.capacity_tokens) : "-",
                      sized ? c.policy : "-", sized ? fmt::format("{:.3f}", c.token_hit_ratio) : "-",
                      sized ? format_ms(c.ttft_p50_ms) : "-", sized ? format_ms(c.ttft_p99_ms) : "-",
                      c.chosen ? "chosen" : c.status == "met" ? "met, larger or slower" : c.status});
  }
  return t;
}

}  // namespace

void add_decoder_search_views(const OptimizeResult& r, report::Report& rep) {
  const DecoderSearch& s = *r.decoder;
  rep.tables.push_back(weights_table(s));
  rep.tables.push_back(pairs_table(s));
  if (s.chosen) {
    const DecoderChoice& c = s.choices[*s.chosen];
    rep.notes.push_back(fmt::format("chosen: {} weights with a {} KV cache ({} per token) behind a {} {} prefix cache "
                                    "({} tokens): TTFT {} {} ms, {:.2f}% quality lost; artifact {}",
                                    c.mode, c.kv_format, format_bytes(c.kv_bytes_per_token), format_bytes(c.cache_bytes),
                                    c.policy, c.capacity_tokens, s.percentile,
                                    format_ms(s.percentile == "p50" ? c.ttft_p50_ms : c.ttft_p99_ms),
                                    c.quality_loss_pct, r.output));
  } else {
    rep.findings.push_back({"warning", "no weights x KV format x cache size met the target within the quality budget",
                            fmt::format("TTFT {} <= {} ms, quality loss <= {:g}%", s.percentile, s.target_ms, s.budget_pct),
                            "relax the target or the budget, or give larger {cache_sizes}"});
  }
  if (!s.refitted.empty())
    rep.notes.push_back(fmt::format("prefill fits refined on the full grid (their screen's TTFT was within 5% of the "
                                    "target at a size that could win): {}", join(s.refitted, ", ")));
  if (s.race)
    rep.notes.push_back(fmt::format("decode speed broke a tie in cache bytes: {} raced {} turn{} ({:.1f} s, {}){}",
                                    join(s.race->modes, ", "), s.race->turns, s.race->turns == 1 ? "" : "s",
                                    s.race->seconds, s.race->ended,
                                    s.race->dropped.empty() ? "" : "; left: " + join(s.race->dropped, ", ")));
  rep.notes.push_back(fmt::format("quality loss: {} against frozen float with its own cache; the KV format is the "
                                  "serving engine's setting, the artifact holds the weights; {} prefix replays",
                                  r.metric, s.simulations));
}

}  // namespace lite::optimize

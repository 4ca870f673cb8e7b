// lite prune on a decoder as JSON and as a report: the decoder's figures before and after side by side (parameters,
// file size, heads, KV heads, MLP width, KV bytes per token measured and by formula, time to first token and per
// token, decode tokens/s, next-token agreement, perplexity), then what each attention and MLP kept.
#include <fmt/format.h>

#include "lite/core/text.hpp"
#include "lite/prune/decoder_report.hpp"

namespace lite::prune {

void to_json(nlohmann::json& j, const AttentionCut& c) {
  j = {{"module", c.module},       {"heads", c.heads},           {"kv_heads", c.kv_heads},
       {"head_dim", c.head_dim},   {"heads_kept", c.heads_kept}, {"kv_heads_kept", c.kv_heads_kept},
       {"counts_in", c.counts_in}, {"skipped", c.skipped}};
}

void to_json(nlohmann::json& j, const MlpCut& c) {
  j = {{"module", c.module}, {"width", c.width}, {"kept", c.kept}, {"skipped", c.skipped}};
}

void to_json(nlohmann::json& j, const DecoderFigures& f) {
  j = {{"parameters", f.parameters},
       {"file_bytes", f.file_bytes},
       {"heads", f.heads},
       {"kv_heads", f.kv_heads},
       {"mlp_width", f.mlp_width},
       {"kv_bytes_per_token", f.kv_bytes_per_token},
       {"kv_formula_bytes_per_token", f.kv_formula_bytes_per_token},
       {"ttft_p50_ms", f.ttft_p50_ms},
       {"tpot_p50_ms", f.tpot_p50_ms},
       {"tpot_p99_ms", f.tpot_p99_ms},
       {"decode_tokens_per_s", f.decode_tokens_per_s},
       {"next_token_agreement", f.agreement},
       {"perplexity", f.perplexity ? nlohmann::json(*f.perplexity) : nlohmann::json()}};
}

void to_json(nlohmann::json& j, const DecoderPruneResult& r) {
  j = {{"form", r.form},
       {"quality_data", r.quality_data},
       {"scored_tokens", r.scored_tokens},
       {"prompt_tokens", r.prompt_tokens},
       {"generated_tokens", r.generated_tokens},
       {"attention", r.attention},
       {"mlp", r.mlp},
       {"before", r.before},
       {"after", r.after}};
}

namespace {

std::string decoder_ratio_cell(double after, double before) { return before > 0 ? fmt::format("{:.3f}x", after / before) : "-"; }

report::Table figures_table(const PruneResult& r, const DecoderPruneResult& d) {
  const DecoderFigures &a = d.before, &b = d.after;
  report::Table t;
  t.title = fmt::format("lite prune {} -> {} (decoder, {}, {}, {} thread{}); {} prompt tokens, {} generated, time p50",
                        r.model, r.output, d.form, r.criterion, r.threads, r.threads == 1 ? "" : "s", d.prompt_tokens,
                        d.generated_tokens);
  t.columns = {"", "original", "pruned", "pruned / original"};
  auto num = [&](const char* name, double x, double y, const std::string& sx, const std::string& sy) {
    t.rows.push_back({name, sx, sy, decoder_ratio_cell(y, x)});
  };
  num("parameters", double(a.parameters), double(b.parameters), format_count(a.parameters), format_count(b.parameters));
  num("file size", double(a.file_bytes), double(b.file_bytes), format_bytes(double(a.file_bytes)),
      format_bytes(double(b.file_bytes)));
  num("attention heads (all layers)", double(a.heads), double(b.heads), std::to_string(a.heads), std::to_string(b.heads));
  num("KV heads (all layers)", double(a.kv_heads), double(b.kv_heads), std::to_string(a.kv_heads),
      std::to_string(b.kv_heads));
  num("MLP width (all layers)", double(a.mlp_width), double(b.mlp_width), std::to_string(a.mlp_width),
      std::to_string(b.mlp_width));
  if (a.kv_bytes_per_token > 0)
    num("KV bytes per token (measured = formula)", a.kv_bytes_per_token, b.kv_bytes_per_token,
        format_bytes(a.kv_bytes_per_token), format_bytes(b.kv_bytes_per_token));
  num("time to first token (ms)", a.ttft_p50_ms, b.ttft_p50_ms, format_ms(a.ttft_p50_ms), format_ms(b.ttft_p50_ms));
  num("time per token (ms)", a.tpot_p50_ms, b.tpot_p50_ms, format_ms(a.tpot_p50_ms), format_ms(b.tpot_p50_ms));
  num("decode tokens/s", a.decode_tokens_per_s, b.decode_tokens_per_s, fmt::format("{:.1f}", a.decode_tokens_per_s),
      fmt::format("{:.1f}", b.decode_tokens_per_s));
  t.rows.push_back({fmt::format("next-token agreement ({} positions)", d.scored_tokens), "100.00%",
                    fmt::format("{:.2f}%", 100 * b.agreement), fmt::format("{:+.2f} points", 100 * (b.agreement - 1))});
  if (a.perplexity && b.perplexity)
    t.rows.push_back({"perplexity", fmt::format("{:.3f}", *a.perplexity), fmt::format("{:.3f}", *b.perplexity),
                      fmt::format("{:+.2f}%", 100 * (*b.perplexity / *a.perplexity - 1))});
  return t;
}

report::Table cuts_table(const DecoderPruneResult& d, bool planned) {
  report::Table t;
  t.title = fmt::format("heads and MLP width per module{}", planned ? " (planned)" : "");
  t.columns = {"module", "what", "before", "after", "status"};
  t.left_aligned_columns = 2;
  for (const auto& c : d.attention)
    t.rows.push_back({c.module, fmt::format("KV heads / heads (head_dim {}, counts in {})", c.head_dim, c.counts_in),
                      fmt::format("{} / {}", c.kv_heads, c.heads), fmt::format("{} / {}", c.kv_heads_kept, c.heads_kept),
                      c.skipped.empty() ? (c.kv_heads_kept < c.kv_heads ? "pruned" : "kept") : "left alone: " + c.skipped});
  for (const auto& c : d.mlp)
    t.rows.push_back({c.module, "MLP width", std::to_string(c.width), std::to_string(c.kept),
                      c.skipped.empty() ? (c.kept < c.width ? "pruned" : "kept") : "left alone: " + c.skipped});
  return t;
}

}  // namespace

void add_decoder_views(const PruneResult& r, report::Report& rep) {
  const DecoderPruneResult& d = *r.decoder;
  if (!r.dry_run) rep.tables.push_back(figures_table(r, d));
  rep.tables.push_back(cuts_table(d, r.dry_run));
  rep.notes.push_back(fmt::format("quality on {}", d.quality_data.empty() ? "nothing (dry run)" : d.quality_data));
  if (d.after.kv_bytes_per_token > 0)
    rep.notes.push_back(fmt::format("the pruned cache's bytes per token is what cache-sim's prefix mode turns into "
                                    "capacity: lite cache-sim TRACE --kv-bytes-per-token {:.0f} (docs/cache-sim.md)",
                                    d.after.kv_bytes_per_token));
}

}  // namespace lite::prune

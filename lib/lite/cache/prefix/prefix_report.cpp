// The prefix study's report: the trace and its unbounded reuse, one row per policy x capacity (x KV format), the
// one-pass curve, the recommendation; and the JSON every printer starts from.
#include <fmt/format.h>

#include "lite/cache/prefix/capacity.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/report_cells.hpp"
#include "lite/core/environment.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::prefix {

void to_json(nlohmann::json& j, const TierHits& t) {
  j = {{"name", t.name}, {"capacity_blocks", t.capacity_blocks}, {"hit_tokens", t.hit_tokens},
       {"hit_blocks", t.hit_blocks}};
  if (t.capacity_bytes) j["capacity_bytes"] = *t.capacity_bytes;
  if (t.bytes_per_second) j["bytes_per_second"] = *t.bytes_per_second;
}

void to_json(nlohmann::json& j, const PrefixRow& r) {
  j = {{"policy", r.policy},
       {"capacity_blocks", r.capacity_blocks},
       {"capacity_tokens", r.capacity_tokens},
       {"requests", r.requests},
       {"prompt_tokens", r.prompt_tokens},
       {"hit_tokens", r.hit_tokens},
       {"hit_blocks", r.hit_blocks},
       {"block_refs", r.block_refs},
       {"token_hit_ratio", r.token_hit_ratio()},
       {"block_hit_ratio", r.block_hit_ratio()},
       {"orphan_blocks", r.orphan_blocks},
       {"cached_blocks", r.cached_blocks},
       {"seconds", r.seconds}};
  if (!r.kv_dtype.empty()) j["kv_dtype"] = r.kv_dtype;
  if (r.capacity_bytes) j["capacity_bytes"] = *r.capacity_bytes;
  if (r.ttft_mean_ms) {
    j["ttft_mean_ms"] = *r.ttft_mean_ms;
    j["ttft_p50_ms"] = *r.ttft_p50_ms;
    j["ttft_p99_ms"] = *r.ttft_p99_ms;
  }
  if (!r.tiers.empty()) {
    j["tiers"] = r.tiers;
    j["recomputed_tokens"] = r.recomputed_tokens;
  }
}

void to_json(nlohmann::json& j, const PrefixResult& r) {
  const TraceFacts& t = r.trace;
  j["mode"] = "prefix";
  j["trace"] = {{"path", t.path}, {"format", t.format}, {"block_tokens", t.block_tokens}, {"requests", t.requests},
                {"prompt_tokens", t.prompt_tokens}, {"output_tokens", t.output_tokens}, {"block_refs", t.block_refs},
                {"distinct_blocks", t.distinct_blocks}, {"bad_lines_skipped", t.bad_lines_skipped},
                {"duration_s", t.duration_s}};
  j["unbounded"] = {{"token_hit_ratio", r.unbounded.token_hit_ratio},
                    {"block_hit_ratio", r.unbounded.block_hit_ratio},
                    {"mean_request_hit_ratio", r.unbounded.mean_request_hit_ratio}};
  j["kv_formats"] = nlohmann::json::array();
  for (const auto& f : r.kv_formats) j["kv_formats"].push_back({{"dtype", f.dtype}, {"bytes_per_token", f.bytes_per_token}});
  if (r.prefill)
    j["prefill_model"] = {{"a_ms", r.prefill->a_ms}, {"b_ms_per_token", r.prefill->b_ms_per_token},
                          {"c_ms_per_token2", r.prefill->c_ms_per_token2}, {"instances", r.instances}};
  j["records"] = r.rows;
  if (r.curve)
    j["curve"] = {{"policy", "lru"}, {"capacity_blocks", r.curve->capacity_blocks},
                  {"hit_tokens", r.curve->hit_tokens}, {"hit_blocks", r.curve->hit_blocks}};
  if (r.recommendation) {
    j["recommendation"] = {{"target", r.recommendation->target}, {"met", r.recommendation->met}};
    if (r.recommendation->row) j["recommendation"]["record"] = *r.recommendation->row;
  }
  j["threads"] = r.threads;
  j["read_seconds"] = r.read_seconds;
  j["simulate_seconds"] = r.simulate_seconds;
  j["notes"] = r.notes;
}

namespace {

double share(uint64_t tokens, uint64_t of) { return of ? double(tokens) / double(of) : 0; }

// Per tier, the share of prompt tokens loaded from it; then the share recomputed though cached.
void add_tier_cells(const PrefixRow& row, std::vector<std::string>& cells) {
  for (const auto& tier : row.tiers) cells.push_back(detail::ratio_cell(share(tier.hit_tokens, row.prompt_tokens)));
  if (!row.tiers.empty()) cells.push_back(detail::ratio_cell(share(row.recomputed_tokens, row.prompt_tokens)));
}

report::Table rows_table(const PrefixResult& r) {
  const bool kv = !r.kv_formats.empty(), ttft = r.prefill.has_value();
  report::Table t;
  t.title = fmt::format("{} ({}, {} requests, {} prompt tokens in {}-token blocks)", r.trace.path, r.trace.format,
                        format_count(r.trace.requests), tokens_text(double(r.trace.prompt_tokens)),
                        r.trace.block_tokens);
  t.columns = {"policy"};
  if (kv) t.columns.push_back("kv");
  for (const char* c : {"capacity (blocks)", "tokens"}) t.columns.push_back(c);
  if (kv) t.columns.push_back("bytes");
  for (const char* c : {"token hit", "block hit", "orphans"}) t.columns.push_back(c);
  const std::vector<TierHits>& tiers = r.rows.empty() ? std::vector<TierHits>{} : r.rows.front().tiers;
  for (const auto& tier : tiers) t.columns.push_back(tier.name + " hit");
  if (!tiers.empty()) t.columns.push_back("recomputed");
  if (ttft)
    for (const char* c : {"TTFT mean", "TTFT p50", "TTFT p99"}) t.columns.push_back(c);
  t.left_aligned_columns = kv ? 2 : 1;
  for (const auto& row : r.rows) {
    std::vector<std::string> cells{row.policy};
    if (kv) cells.push_back(row.kv_dtype);
    cells.push_back(format_count(row.capacity_blocks));
    cells.push_back(tokens_text(double(row.capacity_tokens)));
    if (kv) cells.push_back(row.capacity_bytes ? format_bytes(*row.capacity_bytes) : "-");
    cells.push_back(detail::ratio_cell(row.token_hit_ratio()));
    cells.push_back(detail::ratio_cell(row.block_hit_ratio()));
    cells.push_back(format_count(row.orphan_blocks));
    add_tier_cells(row, cells);
    if (ttft)
      for (const auto& v : {row.ttft_mean_ms, row.ttft_p50_ms, row.ttft_p99_ms}) cells.push_back(detail::ms_cell(v));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

report::Table curve_table(const PrefixResult& r) {
  report::Table t{"Tail-first LRU, every capacity in one pass of stack distances", {"capacity (blocks)", "tokens",
                  "token hit", "block hit"}, {}, 0};
  const PrefixCurve& c = *r.curve;
  for (size_t i = 0; i < c.capacity_blocks.size(); ++i)
    t.rows.push_back({format_count(c.capacity_blocks[i]),
                      tokens_text(double(c.capacity_blocks[i]) * r.trace.block_tokens),
                      detail::ratio_cell(r.trace.prompt_tokens ? double(c.hit_tokens[i]) / double(r.trace.prompt_tokens) : 0),
                      detail::ratio_cell(r.trace.block_refs ? double(c.hit_blocks[i]) / double(r.trace.block_refs) : 0)});
  return t;
}

void add_tier_notes(const PrefixRow& row, report::Report& rep) {
  std::string text = "tiers, fastest first (a victim moves down one tier; tier hit = share of prompt tokens loaded "
                     "from it):";
  for (const auto& t : row.tiers)
    text += fmt::format(" {} {} blocks{} {};", t.name, format_count(t.capacity_blocks),
                        t.capacity_bytes ? " (" + format_bytes(*t.capacity_bytes) + ")" : std::string(),
                        t.bytes_per_second ? fmt::format("at {:.3g} GB/s", *t.bytes_per_second / 1e9)
                                           : std::string("loaded in no time"));
  text.back() = '.';
  rep.notes.push_back(text + " A cached prefix is loaded only as far as loading beats recomputing (recomputed).");
}

void add_notes(const PrefixResult& r, report::Report& rep) {
  const UnboundedReuse& u = r.unbounded;
  rep.notes.push_back(fmt::format("unbounded cache (every block kept): token hit ratio {:.4f}, block hit ratio {:.4f}, "
                                  "mean per-request hit ratio {:.4f}; {} distinct blocks, {} block references",
                                  u.token_hit_ratio, u.block_hit_ratio, u.mean_request_hit_ratio,
                                  format_count(r.trace.distinct_blocks), format_count(r.trace.block_refs)));
  for (const auto& f : r.kv_formats)
    rep.notes.push_back(fmt::format("KV {}: {} per token, {} per block", f.dtype, format_bytes(f.bytes_per_token),
                                    format_bytes(f.bytes_per_token * r.trace.block_tokens)));
  if (r.prefill)
    rep.notes.push_back(fmt::format("prefill model: {} + {} x new + {} x new x (cached + new/2) ms{}", r.prefill->a_ms,
                                    r.prefill->b_ms_per_token, r.prefill->c_ms_per_token2,
                                    r.instances ? fmt::format("; {} instances serve FCFS by arrival", r.instances)
                                                : std::string("; no queueing (each request served at once)")));
  if (!r.rows.empty() && !r.rows.front().tiers.empty()) add_tier_notes(r.rows.front(), rep);
  if (r.trace.bad_lines_skipped)
    rep.notes.push_back(fmt::format("{} bad lines skipped", format_count(r.trace.bad_lines_skipped)));
  for (const auto& n : r.notes) rep.notes.push_back(n);
  rep.notes.push_back(fmt::format("read in {:.2f} s; {} replays in {:.2f} s on {} thread{}", r.read_seconds,
                                  r.rows.size(), r.simulate_seconds, r.threads, r.threads == 1 ? "" : "s"));
}

void add_recommendation(const PrefixResult& r, report::Report& rep) {
  const PrefixRecommendation& rec = *r.recommendation;
  if (!rec.row) {
    rep.findings.push_back({"warning", fmt::format("no simulated capacity reaches {}", rec.target), "",
                            "try larger {sizes}"});
    return;
  }
  const PrefixRow& row = *rec.row;
  rep.findings.push_back(
      {"info",
       fmt::format("smallest capacity reaching {}: {} blocks ({} tokens{}) with {}{}: token hit ratio {:.4f}{}",
                   rec.target, format_count(row.capacity_blocks), tokens_text(double(row.capacity_tokens)),
                   row.capacity_bytes ? ", " + format_bytes(*row.capacity_bytes) : std::string(), row.policy,
                   row.kv_dtype.empty() ? "" : " (KV " + row.kv_dtype + ")", row.token_hit_ratio(),
                   row.ttft_p99_ms ? fmt::format(", TTFT p99 {}", detail::ms_cell(row.ttft_p99_ms)) : ""),
       "", ""});
}

}  // namespace

report::Report to_report(const PrefixResult& r) {
  report::Report rep;
  rep.command = "cache-sim";
  rep.environment = host_environment();
  rep.result = r;
  rep.tables.push_back(rows_table(r));
  if (r.curve) rep.tables.push_back(curve_table(r));
  if (r.recommendation) add_recommendation(r, rep);
  add_notes(r, rep);
  return rep;
}

}  // namespace lite::cache::prefix

// The prefix study's report: the trace and its unbounded reuse, one row per policy x capacity (x KV format), the
// one-pass curve, the recommendation; and the JSON every printer starts from.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "lite/cache/prefix/capacity.hpp"
#include "lite/cache/prefix/prefill_table.hpp"
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

namespace {

// max / mean over the instances: of requests, or of prefill tokens (prompt tokens not hit: the compute).
double imbalance(const std::vector<InstanceLoad>& loads, bool prefill) {
  double max = 0, sum = 0;
  for (const auto& l : loads) {
    const double v = double(prefill ? l.prefill_tokens() : l.requests);
    max = std::max(max, v);
    sum += v;
  }
  return sum > 0 ? max * double(loads.size()) / sum : 1;
}

double instance_hit_ratio(const InstanceLoad& l) {
  return l.prompt_tokens ? double(l.hit_tokens) / double(l.prompt_tokens) : 0;
}

void cluster_json(nlohmann::json& j, const PrefixRow& r) {
  j["route"] = r.route;
  j["request_imbalance"] = imbalance(r.instances, false);
  j["prefill_imbalance"] = imbalance(r.instances, true);
  auto& out = j["instances"] = nlohmann::json::array();
  for (const auto& l : r.instances)
    out.push_back({{"requests", l.requests}, {"prompt_tokens", l.prompt_tokens}, {"hit_tokens", l.hit_tokens},
                   {"prefill_tokens", l.prefill_tokens()}, {"token_hit_ratio", instance_hit_ratio(l)}});
}

}  // namespace

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
  if (!r.route.empty()) cluster_json(j, r);
  if (r.engine)
    j["engine"] = {{"decode_ms", r.engine->decode_ms}, {"waited_requests", r.engine->waited},
                   {"wait_mean_ms", r.engine->wait_mean_ms}, {"wait_max_ms", r.engine->wait_max_ms},
                   {"too_large_requests", r.engine->too_large}, {"preemptions", r.engine->preemptions},
                   {"evicted_blocks", r.engine->evicted_blocks}};
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
  if (r.prefill) {
    j["prefill_model"] = prefill_model_json(*r.prefill);
    j["prefill_model"]["instances"] = r.instances;
    j["prefill_model"]["source"] = r.prefill_source.empty() ? "given" : r.prefill_source;
  }
  j["engine"] = r.engine;
  j["records"] = r.rows;
  if (r.curve)
    j["curve"] = {{"policy", "lru"}, {"capacity_blocks", r.curve->capacity_blocks},
                  {"hit_tokens", r.curve->hit_tokens}, {"hit_blocks", r.curve->hit_blocks}};
  if (r.recommendation) {
    j["recommendation"] = {{"target", r.recommendation->target}, {"met", r.recommendation->met}};
    if (r.recommendation->row) j["recommendation"]["record"] = *r.recommendation->row;
  }
  j["reused_records"] = r.reused_records;
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

const char* const kClusterColumns[] = {"instance hit min", "max", "req imbalance", "prefill imbalance", "global gain"};

// The global pool's row at the same policy, capacity and KV format as a cluster row.
const PrefixRow* global_row(const PrefixResult& r, const PrefixRow& row) {
  for (const auto& g : r.rows)
    if (g.route == "global" && g.policy == row.policy && g.kv_dtype == row.kv_dtype &&
        g.capacity_blocks >= row.capacity_blocks && g.capacity_blocks - row.capacity_blocks < r.instances)
      return &g;
  return nullptr;
}

// Per cluster row: the lowest and highest token hit ratio of the instances that served requests, the load imbalance (max / mean requests and
// prefill tokens) and what the global pool gains over these local pools (its token hit ratio minus theirs).
void add_cluster_cells(const PrefixResult& r, const PrefixRow& row, std::vector<std::string>& cells) {
  double lo = 1, hi = 0;
  bool served = false;
  for (const auto& l : row.instances) {  // an instance that served nothing has no hit ratio
    if (!l.prompt_tokens) continue;
    served = true;
    lo = std::min(lo, instance_hit_ratio(l));
    hi = std::max(hi, instance_hit_ratio(l));
  }
  cells.push_back(served ? detail::ratio_cell(lo) : "-");
  cells.push_back(served ? detail::ratio_cell(hi) : "-");
  cells.push_back(fmt::format("{:.2f}", imbalance(row.instances, false)));
  cells.push_back(fmt::format("{:.2f}", imbalance(row.instances, true)));
  const PrefixRow* g = row.route == "global" ? nullptr : global_row(r, row);
  cells.push_back(g ? fmt::format("{:+.4f}", g->token_hit_ratio() - row.token_hit_ratio()) : "-");
}

const char* const kEngineColumns[] = {"waited", "mean wait", "preempted", "too large"};

// Engine mode: requests that waited for room beside the running ones, their mean wait, preemptions (none: a
// request waits instead) and requests larger than the whole pool.
void add_engine_cells(const PrefixRow& row, std::vector<std::string>& cells) {
  const EngineCounters& e = *row.engine;
  cells.push_back(format_count(e.waited));
  cells.push_back(e.waited ? detail::ms_cell(e.wait_mean_ms) : "-");
  cells.push_back(format_count(e.preemptions));
  cells.push_back(format_count(e.too_large));
}

report::Table rows_table(const PrefixResult& r) {
  const bool kv = !r.kv_formats.empty(), ttft = r.prefill.has_value();
  report::Table t;
  t.title = fmt::format("{} ({}, {} requests, {} prompt tokens in {}-token blocks)", r.trace.path, r.trace.format,
                        format_count(r.trace.requests), tokens_text(double(r.trace.prompt_tokens)),
                        r.trace.block_tokens);
  const bool cluster = !r.rows.empty() && !r.rows.front().route.empty();
  t.columns = {"policy"};
  if (cluster) t.columns.push_back("route");
  if (kv) t.columns.push_back("kv");
  for (const char* c : {"capacity (blocks)", "tokens"}) t.columns.push_back(c);
  if (kv) t.columns.push_back("bytes");
  for (const char* c : {"token hit", "block hit", "orphans"}) t.columns.push_back(c);
  const std::vector<TierHits>& tiers = r.rows.empty() ? std::vector<TierHits>{} : r.rows.front().tiers;
  for (const auto& tier : tiers) t.columns.push_back(tier.name + " hit");
  if (!tiers.empty()) t.columns.push_back("recomputed");
  if (cluster) t.columns.insert(t.columns.end(), std::begin(kClusterColumns), std::end(kClusterColumns));
  const bool engine = !r.rows.empty() && r.rows.front().engine.has_value();
  if (engine) t.columns.insert(t.columns.end(), std::begin(kEngineColumns), std::end(kEngineColumns));
  if (ttft)
    for (const char* c : {"TTFT mean", "TTFT p50", "TTFT p99"}) t.columns.push_back(c);
  t.left_aligned_columns = 1 + kv + cluster;
  for (const auto& row : r.rows) {
    std::vector<std::string> cells{row.policy};
    if (cluster) cells.push_back(row.route);
    if (kv) cells.push_back(row.kv_dtype);
    cells.push_back(format_count(row.capacity_blocks));
    cells.push_back(tokens_text(double(row.capacity_tokens)));
    if (kv) cells.push_back(row.capacity_bytes ? format_bytes(*row.capacity_bytes) : "-");
    cells.push_back(detail::ratio_cell(row.token_hit_ratio()));
    cells.push_back(detail::ratio_cell(row.block_hit_ratio()));
    cells.push_back(format_count(row.orphan_blocks));
    add_tier_cells(row, cells);
    if (cluster) add_cluster_cells(r, row, cells);
    if (engine) add_engine_cells(row, cells);
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
    rep.notes.push_back(fmt::format("prefill model: {}{}{}", prefill_model_text(*r.prefill),
                                    r.prefill_source.empty() ? "" : ", " + r.prefill_source,
                                    r.instances ? fmt::format("; {} instances serve FCFS by arrival", r.instances)
                                                : std::string("; no queueing (each request served at once)")));
  if (!r.rows.empty() && !r.rows.front().tiers.empty()) add_tier_notes(r.rows.front(), rep);
  if (!r.rows.empty() && r.rows.front().engine)
    rep.notes.push_back(fmt::format(
        "engine {}: requests arrive at their timestamps and hold their blocks (pinned) until prefilled{} and decoded "
        "at {:.4g} ms per output token; a request whose blocks do not fit beside the pinned ones waits (FCFS), never "
        "preempted; generated blocks get ids no prompt matches (docs/cache-sim.md \"Engine mode\")", r.engine,
        r.prefill ? "" : " (at once: no prefill model)", r.rows.front().engine->decode_ms));
  if (!r.rows.empty() && !r.rows.front().route.empty())
    rep.notes.push_back(fmt::format(
        "cluster of {} instances: 'global' is one pool of the capacity every instance reads (requests to the least "
        "loaded); each route row is {} local pools of capacity/{} behind that router. Imbalance: max / mean per "
        "instance of requests and of prefill tokens (prompt tokens not hit); global gain: the global pool's token hit "
        "ratio minus the local pools'", r.instances, r.instances, r.instances));
  if (r.trace.bad_lines_skipped)
    rep.notes.push_back(fmt::format("{} bad lines skipped", format_count(r.trace.bad_lines_skipped)));
  for (const auto& n : r.notes) rep.notes.push_back(n);
  const size_t replayed = r.rows.size() - std::min(r.rows.size(), r.reused_records);  // the rest: --results-dir's
  rep.notes.push_back(fmt::format("read in {:.2f} s; {} replays in {:.2f} s on {} thread{}", r.read_seconds, replayed,
                                  r.simulate_seconds, r.threads, r.threads == 1 ? "" : "s"));
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
                   (row.kv_dtype.empty() ? std::string() : " (KV " + row.kv_dtype + ")") +
                       (row.route.empty() ? std::string() : ", " + row.route), row.token_hit_ratio(),
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

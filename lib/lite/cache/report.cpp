// Result -> JSON (stable field names) and -> lite::report::Report (tables, findings, notes).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/cache/prefix/engine.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/cache_sim.hpp"
#include "lite/cache/cluster.hpp"
#include "lite/cache/report_cells.hpp"
#include "lite/cache/policies.hpp"
#include "lite/core/environment.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

namespace {

nlohmann::json latency_json(const LatencyFigures& f) {
  return {{"mean", f.mean_ms}, {"p50", f.p50_ms}, {"p99", f.p99_ms}};
}

nlohmann::json counters_json(const Counters& c) {
  return {{"n_req", c.n_req},           {"n_miss", c.n_miss},
          {"miss_ratio", c.miss_ratio()}, {"n_req_byte", c.n_req_byte},
          {"n_miss_byte", c.n_miss_byte}, {"byte_miss_ratio", c.byte_miss_ratio()}};
}

using detail::ms_cell;
using detail::ratio_cell;

}  // namespace

void to_json(nlohmann::json& j, const SimulationConfig& o) {
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& p : o.policies) policies.push_back(p.label());
  nlohmann::json sizes = nlohmann::json::array();
  for (const auto& s : o.sizes) sizes.push_back(s.text);
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& v : o.variants)
    variants.push_back({{"label", v.label}, {"source", v.source}, {"mean", v.mean_ms}, {"p50", v.p50_ms}, {"p99", v.p99_ms}});
  j = {{"trace", o.trace},
       {"format", trace_format_name(o.format)},
       {"csv_columns",
        {{"key", o.csv.key}, {"time", o.csv.time}, {"size", o.csv.size}, {"cost", o.csv.cost},
         {"delimiter", o.csv.delimiter ? std::string(1, o.csv.delimiter) : std::string()},
         {"explicit", o.csv.explicit_columns}}},
       {"has_header", o.has_header},
       {"policies", policies},
       {"sizes", o.sizes.empty() ? nlohmann::json("auto") : sizes},
       {"bytes", o.bytes},
       {"mrc", o.mrc},
       {"mrc_partitions", o.mrc_partitions},
       {"sample_rate", o.sample_rate},
       {"sample_objects", o.sample_objects},
       {"sample_check", o.sample_check},
       {"hit_latency_ms", o.hit_latency_ms},
       {"miss_latency_ms", o.miss_latency_ms ? nlohmann::json(*o.miss_latency_ms) : nlohmann::json()},
       {"miss_latency_from", variants},
       {"target_hit_ratio", o.target_hit_ratio ? nlohmann::json(*o.target_hit_ratio) : nlohmann::json()},
       {"target_p99_ms", o.target_p99_ms ? nlohmann::json(*o.target_p99_ms) : nlohmann::json()},
       {"threads", o.threads},
       {"skip_bad_lines", o.skip_bad_lines}};
  if (!o.cluster.nodes.empty())
    j["cluster"] = {{"nodes", o.cluster.nodes}, {"route", o.cluster.route}, {"virtual_nodes", o.cluster.virtual_nodes},
                    {"max_node_load", o.cluster.max_node_load}};
}

void to_json(nlohmann::json& j, const SimRecord& r) {
  j = {{"policy", r.policy}, {"size", r.size}, {"size_text", r.size_text}};
  j.update(counters_json(r.counters));
  j["sampled"] = r.sampled;
  if (r.sampled) j["simulated_size"] = r.simulated_size;
  if (r.sampled_counters) j["sampled_counts"] = counters_json(*r.sampled_counters);
  if (r.latency) j["latency_ms"] = latency_json(*r.latency);
  if (!r.variants.empty()) {
    nlohmann::json v = nlohmann::json::array();
    for (const auto& [label, f] : r.variants) v.push_back({{"variant", label}, {"latency_ms", latency_json(f)}});
    j["variants"] = v;
  }
  if (r.full) j["full_trace"] = counters_json(*r.full);
  j["memory_bytes"] = r.memory_bytes;
  if (r.miss_cost_s) j["miss_cost_s"] = *r.miss_cost_s;
  if (r.saved_cost_s) j["saved_cost_s"] = *r.saved_cost_s;
  if (r.sampled) {
    j["miss_ratio_error"] = r.miss_ratio_error ? nlohmann::json(*r.miss_ratio_error) : nlohmann::json();
    j["small_sample"] = r.small_sample;
  }
}

void to_json(nlohmann::json& j, const TraceSummary& t) {
  auto opt = [](const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  j = {{"path", t.path},
       {"format", t.format},
       {"n_req", t.n_req},
       {"n_req_total", t.n_req_total},
       {"n_req_byte", t.n_req_byte},
       {"n_obj", opt(t.n_obj)},
       {"working_set_bytes", opt(t.working_set_bytes)},
       {"max_object_size", opt(t.max_object_size)},
       {"n_skipped_zero_size", t.n_skipped_zero_size},
       {"n_bad_lines_skipped", t.n_bad_lines_skipped},
       {"has_cost_column", t.has_cost_column},
       {"has_next_access", t.has_next_access},
       {"sample_rate", t.sample_rate},
       {"sampling", t.sampling},
       {"n_obj_sampled", opt(t.n_obj_sampled)},
       {"achieved_rate", t.achieved_rate ? nlohmann::json(*t.achieved_rate) : nlohmann::json()},
       {"total_cost_s", t.total_cost_s ? nlohmann::json(*t.total_cost_s) : nlohmann::json()}};
}

namespace {
// --mrc-partitions: the spread of the partitions' estimates beside each point of the combined curve.
nlohmann::json partitions_json(const MrcPartitions& p, const MrcCurve& c) {
  nlohmann::json at = nlohmann::json::array(), lo = nlohmann::json::array(), hi = nlohmann::json::array(),
                 se = nlohmann::json::array();
  for (size_t i = 0; i < p.at_sizes.size() && i < c.at_sizes.size(); ++i)
    at.push_back({{"size", c.at_sizes[i].size}, {"miss_ratio", c.at_sizes[i].miss_ratio},
                  {"min", p.at_sizes[i].min}, {"max", p.at_sizes[i].max}, {"std_error", p.at_sizes[i].std_error}});
  for (const auto& s : p.points) {
    lo.push_back(s.min);
    hi.push_back(s.max);
    se.push_back(s.std_error);
  }
  return {{"n", p.n},
          {"combined", "mean of the partitions' curves weighted by their requests"},
          {"requests", p.requests},
          {"at_sizes", at},
          {"curve", {{"min", lo}, {"max", hi}, {"std_error", se}}}};
}
}  // namespace

void to_json(nlohmann::json& j, const MrcCurve& c) {
  nlohmann::json sizes = nlohmann::json::array(), mr = nlohmann::json::array(), bmr = nlohmann::json::array();
  for (const auto& p : c.points) {
    sizes.push_back(p.size);
    mr.push_back(p.miss_ratio);
    bmr.push_back(p.byte_miss_ratio);
  }
  nlohmann::json at = nlohmann::json::array();
  for (const auto& p : c.at_sizes)
    at.push_back({{"size", p.size}, {"miss_ratio", p.miss_ratio}, {"byte_miss_ratio", p.byte_miss_ratio}});
  j = {{"policy", "lru"},
       {"method", c.partitions ? "key-partitioned: one-pass Mattson stack distances per partition, combined"
                               : "one-pass Mattson stack distances (Fenwick tree)"},
       {"bytes", c.bytes},
       {"n_req", c.n_req},
       {"at_sizes", at},
       {"curve", {{"size", sizes}, {"miss_ratio", mr}, {"byte_miss_ratio", bmr}}},
       {"exact_from_size", c.exact_from_size},
       {"sizes_vary", c.sizes_vary},
       {"smallest_size_for_target", c.smallest_size_for_target ? nlohmann::json(*c.smallest_size_for_target) : nlohmann::json()},
       {"seconds", c.seconds}};
  if (c.partitions) j["partitions"] = partitions_json(*c.partitions, c);
}

void to_json(nlohmann::json& j, const RecommendationSet& r) {
  auto rec = [](const Recommendation& x) {
    nlohmann::json o = {{"policy", x.policy},
                        {"size", x.size ? nlohmann::json(*x.size) : nlohmann::json()},
                        {"reached", x.size.has_value()}};
    if (!x.variant.empty()) o["variant"] = x.variant;
    if (x.size) o["miss_ratio"] = x.miss_ratio;
    if (x.p99_ms) o["p99_ms"] = *x.p99_ms;
    return o;
  };
  nlohmann::json per = nlohmann::json::array();
  for (const auto& x : r.per_policy) per.push_back(rec(x));
  j = {{"target", r.target}, {"reached", r.reached}, {"per_policy", per}, {"best", r.best ? rec(*r.best) : nlohmann::json()}};
}

void to_json(nlohmann::json& j, const CacheSimResult& r) {
  if (r.prefix) {
    j = *r.prefix;
    j["gates"] = r.gates;
    j["ranks"] = r.ranks;
    j["hosts"] = r.hosts;
    return;
  }
  j = {{"trace", r.trace}, {"bytes", r.bytes}, {"size_unit", r.bytes ? "bytes" : "objects"}, {"records", r.records}};
  j["cost_model"] = r.cost_model.empty() ? nlohmann::json() : nlohmann::json(r.cost_model);
  j["mrc"] = r.mrc ? nlohmann::json(*r.mrc) : nlohmann::json();
  j["recommendation"] = r.recommendation ? nlohmann::json(*r.recommendation) : nlohmann::json();
  if (r.sampling_check)
    j["sampling_check"] = {{"mean_abs_error", r.sampling_check->mean_abs_error},
                           {"max_abs_error", r.sampling_check->max_abs_error},
                           {"worst", r.sampling_check->worst}};
  else
    j["sampling_check"] = nullptr;
  j["reused_records"] = r.reused_records;
  if (r.cluster) j["cluster"] = *r.cluster;
  j["notes"] = r.notes;
  j["gates"] = r.gates;
  j["plot"] = r.plot.empty() ? nlohmann::json() : nlohmann::json(r.plot);
  j["timing"] = {{"seconds", r.seconds},
                 {"simulations", r.simulations},
                 {"requests_per_second", r.requests_per_second},
                 {"threads", r.threads},
                 {"ranks", r.ranks},
                 {"hosts", r.hosts},
                 {"passes", r.passes}};
}

namespace {

std::string seconds_text(double s) { return fmt::format("{:.1f}", s); }

// " per rank, 4 MPI ranks on 2 hosts (node01, node02)" for an MPI sweep, "" for one process.
std::string ranks_text(const CacheSimResult& r) {
  if (r.ranks <= 1) return "";
  std::string text = fmt::format(" per rank, {} MPI ranks", r.ranks);
  if (!r.hosts.empty())
    text += fmt::format(" on {} host{} ({})", r.hosts.size(), r.hosts.size() == 1 ? "" : "s", join(r.hosts, ", "));
  return text;
}

report::Table results_table(const CacheSimResult& r) {
  const bool bytes = r.bytes;
  const std::optional<uint64_t> ws = bytes ? r.trace.working_set_bytes : r.trace.n_obj;
  report::Table t;
  t.title = fmt::format("{} ({}, {} requests{}{})", r.trace.path, r.trace.format, format_count(r.trace.n_req_total),
                        r.trace.n_obj ? fmt::format(", {} objects", format_count(*r.trace.n_obj)) : "",
                        r.trace.working_set_bytes && bytes
                            ? fmt::format(", working set {}", format_bytes(double(*r.trace.working_set_bytes)))
                            : "");
  const bool sampled = !r.records.empty() && r.records.front().sampled;
  const bool has_cost = !r.records.empty() && r.records.front().miss_cost_s.has_value();
  t.columns = {"policy", bytes ? "size" : "size (objects)"};
  if (ws) t.columns.push_back("of WS");
  if (sampled) t.columns.push_back("sampled size");
  t.columns.push_back("miss ratio");
  if (sampled) t.columns.push_back("+/- (95%)");
  if (bytes) t.columns.push_back("byte miss ratio");
  t.columns.push_back("misses");
  if (has_cost) {
    t.columns.push_back("miss cost s");
    t.columns.push_back("saved s");
  }
  if (r.sampling_check) {
    t.columns.push_back("full miss ratio");
    t.columns.push_back("error");
  }
  bool has_latency = false;
  std::vector<std::string> variant_labels;
  if (!r.records.empty()) {
    has_latency = r.records.front().latency.has_value();
    for (const auto& [label, f] : r.records.front().variants) variant_labels.push_back(label);
  }
  if (has_latency) t.columns.insert(t.columns.end(), {"mean ms", "p50 ms", "p99 ms"});
  for (const auto& v : variant_labels) {
    t.columns.push_back("mean ms " + v);
    t.columns.push_back("p99 ms " + v);
  }
  for (const auto& rec : r.records) {
    std::vector<std::string> row = {rec.policy, size_label(rec.size, bytes)};
    if (ws) row.push_back(*ws ? fmt::format("{:.2f}%", 100.0 * double(rec.size) / double(*ws)) : "-");
    if (sampled) row.push_back(size_label(rec.simulated_size, bytes) + (rec.small_sample ? " (small)" : ""));
    row.push_back(ratio_cell(rec.counters.miss_ratio()));
    if (sampled) row.push_back(rec.miss_ratio_error ? ratio_cell(*rec.miss_ratio_error) : "-");
    if (bytes) row.push_back(ratio_cell(rec.counters.byte_miss_ratio()));
    row.push_back(format_count(rec.counters.n_miss));
    if (has_cost) {
      row.push_back(rec.miss_cost_s ? seconds_text(*rec.miss_cost_s) : "-");
      row.push_back(rec.saved_cost_s ? seconds_text(*rec.saved_cost_s) : "-");
    }
    if (r.sampling_check) {
      row.push_back(rec.full ? ratio_cell(rec.full->miss_ratio()) : "-");
      row.push_back(rec.full ? fmt::format("{:+.4f}", rec.counters.miss_ratio() - rec.full->miss_ratio()) : "-");
    }
    if (rec.latency) {
      row.push_back(ms_cell(rec.latency->mean_ms));
      row.push_back(ms_cell(rec.latency->p50_ms));
      row.push_back(ms_cell(rec.latency->p99_ms));
    }
    for (const auto& [label, f] : rec.variants) {
      row.push_back(ms_cell(f.mean_ms));
      row.push_back(ms_cell(f.p99_ms));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

report::Table curve_table(const MrcCurve& c, bool bytes) {
  report::Table m;
  m.title = c.bytes ? fmt::format("LRU miss-ratio curve, one pass ({} points; exact from the largest object, {}, up{})",
                                  format_count(c.points.size()), format_bytes(double(c.exact_from_size)),
                                  c.sizes_vary ? ", approximate: object sizes vary" : "")
                    : fmt::format("LRU miss-ratio curve, one pass ({} points, exact at every size)",
                                  format_count(c.points.size()));
  if (c.partitions)
    m.title = fmt::format("LRU miss-ratio curve from {} key partition{} (mean weighted by requests; min, max and "
                          "standard error of the partitions' own estimates)",
                          c.partitions->n, c.partitions->n == 1 ? "" : "s");
  m.columns = {"size", "miss ratio"};
  if (c.bytes) m.columns.push_back("byte miss ratio");
  if (c.partitions) m.columns.insert(m.columns.end(), {"min", "max", "std error"});
  for (size_t i = 0; i < c.at_sizes.size(); ++i) {
    const auto& p = c.at_sizes[i];
    std::vector<std::string> row = {size_label(p.size, bytes), ratio_cell(p.miss_ratio)};
    if (c.bytes) row.push_back(ratio_cell(p.byte_miss_ratio));
    if (c.partitions)
      row.insert(row.end(), {ratio_cell(c.partitions->at_sizes[i].min), ratio_cell(c.partitions->at_sizes[i].max),
                             fmt::format("{:.4f}", c.partitions->at_sizes[i].std_error)});
    m.rows.push_back(std::move(row));
  }
  return m;
}

void add_recommendation(const CacheSimResult& r, report::Report& rep) {
  const bool bytes = r.bytes;
  const auto& set = *r.recommendation;
  report::Table rt;
  rt.title = "Smallest simulated size reaching " + set.target;
  bool with_variant = false;
  for (const auto& x : set.per_policy) with_variant = with_variant || !x.variant.empty();
  if (with_variant) rt.columns.push_back("variant");
  rt.columns.insert(rt.columns.end(), {"policy", "size", "miss ratio", "p99 ms"});
  rt.left_aligned_columns = with_variant ? 2 : 1;
  for (const auto& x : set.per_policy) {
    std::vector<std::string> row;
    if (with_variant) row.push_back(x.variant);
    const bool best = set.best && set.best->policy == x.policy && set.best->variant == x.variant;
    row.push_back(x.policy + (best ? " (best)" : x.offline_bound ? " (offline bound)" : ""));
    row.push_back(x.size ? size_label(*x.size, bytes) : "not reached");
    row.push_back(x.size ? ratio_cell(x.miss_ratio) : "-");
    row.push_back(x.p99_ms ? ms_cell(*x.p99_ms) : "-");
    rt.rows.push_back(std::move(row));
  }
  rep.tables.push_back(std::move(rt));
  if (set.best) {
    std::string who = set.best->variant.empty() ? set.best->policy : set.best->variant + " + " + set.best->policy;
    rep.findings.push_back({"info",
                            fmt::format("size the cache at {}: {} reaches {} there (miss ratio {:.4f})",
                                        bytes ? format_bytes(double(*set.best->size)) : format_count(*set.best->size) + " objects",
                                        who, set.target, set.best->miss_ratio),
                            "", ""});
  } else {
    uint64_t largest = 0;
    double best_mr = 1;
    std::string best_policy;
    for (const auto& rec : r.records) largest = std::max(largest, rec.size);
    for (const auto& rec : r.records)
      if (rec.size == largest && rec.counters.miss_ratio() <= best_mr) {
        best_mr = rec.counters.miss_ratio();
        best_policy = rec.policy;
      }
    rep.findings.push_back(
        {"warning",
         fmt::format("no policy reaches {} at the simulated sizes; the largest, {}, gives miss ratio {:.4f} with {}",
                     set.target, size_label(largest, bytes), best_mr, best_policy),
         set.target, "simulate larger sizes ({sizes}), relax the target, or cut the miss latency (a lighter model)"});
  }
  if (r.mrc && r.mrc->smallest_size_for_target && set.target.rfind("hit ratio", 0) == 0)
    rep.findings.push_back({"info",
                            fmt::format("the {} reaches {} at {}{}",
                                        r.mrc->partitions ? "LRU curve from key partitions" : "exact LRU curve",
                                        set.target, size_label(*r.mrc->smallest_size_for_target, bytes),
                                        r.mrc->bytes        ? " (to 1/32 of an octave)"
                                        : r.mrc->partitions ? " (to the curve's grid)"
                                                            : ""),
                            "", ""});
}

// Sampled sizes whose scaled cache holds under kMinSampledObjects objects: their estimates are noise.
void add_small_sample_finding(const CacheSimResult& r, report::Report& rep) {
  std::vector<uint64_t> small;
  for (const auto& rec : r.records)
    if (rec.small_sample && std::find(small.begin(), small.end(), rec.size) == small.end()) small.push_back(rec.size);
  if (small.empty()) return;
  const uint64_t smallest = *std::min_element(small.begin(), small.end());
  uint64_t scaled = 0;
  for (const auto& rec : r.records)
    if (rec.size == smallest) scaled = rec.simulated_size;
  // the rate at which the smallest size's sampled cache reaches kMinSampledObjects (objects, or the
  // mean request size's worth of bytes)
  const double mean = r.bytes && r.trace.n_req_total ? double(r.trace.n_req_byte) / double(r.trace.n_req_total) : 1.0;
  const double needed = std::min(1.0, double(kMinSampledObjects) * std::max(mean, 1.0) / double(smallest));
  rep.findings.push_back(
      {"warning",
       fmt::format("{} of the sampled sizes {} a sampled cache under {} objects (smallest: {} sampled to {}): {} "
                   "unreliable",
                   small.size(), small.size() == 1 ? "has" : "have", kMinSampledObjects, size_label(smallest, r.bytes),
                   size_label(scaled, r.bytes), small.size() == 1 ? "its estimate is" : "their estimates are"),
       fmt::format("a sampled cache of >= {} objects", kMinSampledObjects),
       fmt::format("sample at rate >= {:.3g} for every size to hold {} sampled objects, or use fixed-size sampling "
                   "(option sample_objects) so the sample keeps a fixed number of keys",
                   needed, kMinSampledObjects)});
}

void add_notes(const CacheSimResult& r, const SimulationConfig& o, report::Report& rep) {
  if (r.trace.sampling.size())
    rep.notes.push_back(fmt::format("SHARDS {} sampling at rate {:.6g}: {} of {} requests simulated at cache sizes scaled by "
                                    "the rate; misses are reported as full-trace estimates (sampled misses / rate); "
                                    "+/- is a 95% binomial half-width over the sampled requests (a floor: requests of "
                                    "one key are sampled together)",
                                    r.trace.sampling, r.trace.sample_rate, format_count(r.trace.n_req),
                                    format_count(r.trace.n_req_total)));
  if (!r.cost_model.empty())
    rep.notes.push_back(fmt::format("latency: hit {} ms, miss from {}", ms_cell(o.hit_latency_ms),
                                    r.cost_model == "constant" ? format_ms(*o.miss_latency_ms) + " ms"
                                    : r.cost_model == "cost column" ? "the trace's cost column"
                                                                     : "the lite profile reports (log-normal through p50 and p99)"));
  if (r.trace.total_cost_s)
    rep.notes.push_back(fmt::format("miss cost: seconds of miss latency paid; saved: of the {:.1f} s every request "
                                    "would cost with no cache",
                                    *r.trace.total_cost_s));
  for (const auto& n : r.notes) rep.notes.push_back(n);
  if (r.simulations == 0 && r.records.empty())
    rep.notes.push_back(fmt::format("{} requests, one-pass LRU curve in {:.2f} s ({:.1f} M requests/s)",
                                    format_count(r.trace.n_req_total), r.seconds, r.requests_per_second / 1e6));
  else
    rep.notes.push_back(fmt::format("{} requests x {} simulation{} in {:.2f} s ({:.1f} M simulated requests/s; {} pass{} "
                                    "over the trace, {} thread{}{})",
                                    format_count(r.trace.n_req_total), r.simulations, r.simulations == 1 ? "" : "s",
                                    r.seconds, double(r.trace.n_req) * double(r.simulations) / std::max(r.seconds, 1e-9) / 1e6,
                                    r.passes, r.passes == 1 ? "" : "es", r.threads, r.threads == 1 ? "" : "s",
                                    ranks_text(r)));
}

}  // namespace

report::Report to_report(const CacheSimResult& r) {
  if (r.prefix) {
    report::Report rep = prefix::to_report(*r.prefix);
    rep.result["gates"] = r.gates;
    rep.result["ranks"] = r.ranks;
    rep.result["hosts"] = r.hosts;
    return rep;
  }
  const SimulationConfig& o = r.config;
  report::Report rep;
  rep.command = "cache-sim";
  rep.environment = host_environment();
  rep.result = r;
  rep.result["options"] = o;
  if (!r.records.empty()) rep.tables.push_back(results_table(r));
  if (r.mrc) rep.tables.push_back(curve_table(*r.mrc, r.bytes));
  if (r.recommendation && !r.recommendation->per_policy.empty()) add_recommendation(r, rep);
  add_cluster_report(r, rep);
  add_small_sample_finding(r, rep);
  if (r.sampling_check)
    rep.findings.push_back({"info",
                            fmt::format("sampling error against the full trace: mean |miss ratio difference| {:.4f}, "
                                        "max {:.4f} ({})",
                                        r.sampling_check->mean_abs_error, r.sampling_check->max_abs_error,
                                        r.sampling_check->worst),
                            "", ""});
  add_notes(r, o, rep);
  return rep;
}

report::Report policy_list_report() {
  report::Report r;
  r.command = "cache-sim";
  r.environment = host_environment();
  report::Table t{"Cache policies ({policies} NAME[:k=v,...], several separated by commas, or all)",
                  {"name", "policy", "parameters (defaults)", "algorithm"},
                  {},
                  2};
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : policy_table()) {
    std::string params = describe_params(e);
    t.rows.push_back({e.name, e.display, params.empty() ? "-" : params, e.description});
    nlohmann::json p = nlohmann::json::array();
    for (const auto& x : e.params)
      p.push_back({{"name", x.name}, {"alias", x.alias}, {"default", x.default_value}, {"min", x.min_value},
                   {"max", x.max_value}, {"description", x.description}});
    list.push_back({{"name", e.name}, {"display", e.display}, {"description", e.description}, {"parameters", p},
                    {"needs_next_access", e.needs_next_access}});
  }
  t.left_aligned_columns = 4;
  r.tables.push_back(std::move(t));
  r.tables.push_back(prefix::prefix_policy_list());
  nlohmann::json prefix_list = nlohmann::json::array();
  for (const auto& row : r.tables.back().rows)
    prefix_list.push_back({{"name", row[0]}, {"evicts", row[1]}, {"description", row[2]}});
  report::Table engines{"Engines of the prefix mode (--engine; docs/cache-sim.md \"Engine mode\")", {"name", "rule"}, {}, 2};
  nlohmann::json engine_list = nlohmann::json::array();
  for (const auto& e : prefix::engine_table()) {
    engines.rows.push_back({e.name, e.description});
    engine_list.push_back({{"name", e.name}, {"description", e.description}});
  }
  r.tables.push_back(std::move(engines));
  r.result = {{"policies", list}, {"prefix_policies", prefix_list}, {"engines", engine_list}};
  return r;
}


}  // namespace lite::cache

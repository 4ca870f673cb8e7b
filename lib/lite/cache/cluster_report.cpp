// The cluster part of cache-sim's JSON and report (see cluster.hpp).
#include <fmt/format.h>

#include "lite/cache/cluster.hpp"
#include "lite/cache/report_cells.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

namespace {

nlohmann::json latency_json(const std::optional<LatencyFigures>& f) {
  if (!f) return nullptr;
  return {{"mean", f->mean_ms}, {"p50", f->p50_ms}, {"p99", f->p99_ms}};
}

nlohmann::json record_json(const ClusterRecord& r) {
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t n = 0; n < r.per_node.size(); ++n) {
    const Counters& c = r.per_node[n];
    nodes.push_back({{"node", n},
                     {"n_req", c.n_req},
                     {"n_miss", c.n_miss},
                     {"share", r.counters.n_req ? double(c.n_req) / double(r.counters.n_req) : 0.0},
                     {"hit_ratio", c.n_req ? 1.0 - c.miss_ratio() : 0.0},
                     {"byte_miss_ratio", c.byte_miss_ratio()},
                     {"latency_ms", latency_json(r.per_node_latency[n])}});
  }
  nlohmann::json variants = nlohmann::json::object();
  for (const auto& [label, fig] : r.variants) variants[label] = latency_json(fig);
  return {{"policy", r.policy},
          {"size", r.size},
          {"size_text", r.size_text},
          {"nodes", r.nodes},
          {"node_size", r.node_size},
          {"n_req", r.counters.n_req},
          {"n_miss", r.counters.n_miss},
          {"miss_ratio", r.counters.miss_ratio()},
          {"hit_ratio", 1.0 - r.counters.miss_ratio()},
          {"byte_miss_ratio", r.counters.byte_miss_ratio()},
          {"latency_ms", latency_json(r.latency)},
          {"variants", variants},
          {"miss_cost_s", r.miss_cost_s ? nlohmann::json(*r.miss_cost_s) : nlohmann::json()},
          {"hottest_node", r.hottest},
          {"max_over_mean", r.max_over_mean},
          {"hottest_hit_ratio", r.hottest_hit_ratio},
          {"hottest_p99_ms", r.hottest_p99_ms ? nlohmann::json(*r.hottest_p99_ms) : nlohmann::json()},
          {"per_node", nodes}};
}

nlohmann::json recommendation_json(const ClusterRecommendation& x) {
  nlohmann::json o = {{"policy", x.policy}, {"reached", x.nodes.has_value()}};
  if (!x.variant.empty()) o["variant"] = x.variant;
  o["nodes"] = x.nodes ? nlohmann::json(*x.nodes) : nlohmann::json();
  if (!x.nodes) return o;
  o["node_size"] = x.node_size;
  o["size"] = x.size;
  o["hit_ratio"] = x.hit_ratio;
  o["max_over_mean"] = x.max_over_mean;
  o["p99_ms"] = x.p99_ms ? nlohmann::json(*x.p99_ms) : nlohmann::json();
  return o;
}

using detail::ms_cell;
using detail::ratio_cell;

report::Table records_table(const ClusterResult& c, bool bytes) {
  report::Table t;
  t.title = fmt::format("Clusters: K nodes of size/K behind {} routing{}", c.route,
                        c.virtual_nodes ? fmt::format(" ({} points per node)", c.virtual_nodes) : "");
  t.columns = {"policy", "size", "nodes", "size/node", "hit ratio", "p99 ms", "max/mean", "hottest share",
               "hottest hit ratio"};
  for (const auto& r : c.records) {
    const double share = r.counters.n_req ? double(r.per_node[r.hottest].n_req) / double(r.counters.n_req) : 0.0;
    std::optional<double> p99;
    if (r.latency) p99 = r.latency->p99_ms;
    else if (!r.variants.empty()) p99 = r.variants.front().second.p99_ms;
    t.rows.push_back({r.policy, size_label(r.size, bytes), std::to_string(r.nodes), size_label(r.node_size, bytes),
                      ratio_cell(1.0 - r.counters.miss_ratio()), ms_cell(p99), fmt::format("{:.2f}", r.max_over_mean),
                      fmt::format("{:.1f}% (node {})", share * 100, r.hottest), ratio_cell(r.hottest_hit_ratio)});
  }
  return t;
}

void add_recommendation(const ClusterResult& c, bool bytes, report::Report& rep) {
  report::Table t;
  t.title = fmt::format("Smallest cluster reaching {} with the hottest node at most {:g}x the mean load", c.target,
                        c.max_node_load);
  bool with_variant = false;
  for (const auto& x : c.per_policy) with_variant = with_variant || !x.variant.empty();
  if (with_variant) t.columns.push_back("variant");
  t.columns.insert(t.columns.end(), {"policy", "nodes", "size/node", "total", "hit ratio", "p99 ms", "max/mean"});
  t.left_aligned_columns = with_variant ? 2 : 1;
  for (const auto& x : c.per_policy) {
    std::vector<std::string> row;
    if (with_variant) row.push_back(x.variant);
    const bool best = c.best && c.best->policy == x.policy && c.best->variant == x.variant;
    row.push_back(x.policy + (best ? " (best)" : x.offline_bound ? " (offline bound)" : ""));
    if (x.nodes)
      row.insert(row.end(), {std::to_string(*x.nodes), size_label(x.node_size, bytes), size_label(x.size, bytes),
                             ratio_cell(x.hit_ratio), ms_cell(x.p99_ms), fmt::format("{:.2f}", x.max_over_mean)});
    else
      row.insert(row.end(), {"not reached", "-", "-", "-", "-", "-"});
    t.rows.push_back(std::move(row));
  }
  rep.tables.push_back(std::move(t));
  if (c.best)
    rep.findings.push_back({"info",
                            fmt::format("run {} node{} of {} each ({} in all): {} reaches {} with the hottest node at "
                                        "{:.2f}x the mean load",
                                        *c.best->nodes, *c.best->nodes == 1 ? "" : "s", size_label(c.best->node_size, bytes),
                                        size_label(c.best->size, bytes),
                                        c.best->variant.empty() ? c.best->policy : c.best->variant + " + " + c.best->policy,
                                        c.target, c.best->max_over_mean),
                            "", ""});
  else
    rep.findings.push_back({"warning",
                            fmt::format("no simulated cluster reaches {} with the hottest node at most {:g}x the mean",
                                        c.target, c.max_node_load),
                            c.target,
                            "simulate larger sizes ({sizes}) or other node counts ({nodes}), raise {max_node_load}, "
                            "or try another {route}"});
}

}  // namespace

void to_json(nlohmann::json& j, const ClusterResult& c) {
  nlohmann::json records = nlohmann::json::array();
  for (const auto& r : c.records) records.push_back(record_json(r));
  nlohmann::json per = nlohmann::json::array();
  for (const auto& x : c.per_policy) per.push_back(recommendation_json(x));
  j = {{"route", c.route},
       {"virtual_nodes", c.virtual_nodes ? nlohmann::json(c.virtual_nodes) : nlohmann::json()},
       {"max_node_load", c.max_node_load},
       {"records", records}};
  j["recommendation"] = c.target.empty() ? nlohmann::json()
                                         : nlohmann::json{{"target", c.target},
                                                          {"reached", c.best.has_value()},
                                                          {"per_policy", per},
                                                          {"best", c.best ? recommendation_json(*c.best) : nlohmann::json()}};
}

void add_cluster_report(const CacheSimResult& result, report::Report& rep) {
  if (!result.cluster) return;
  const ClusterResult& c = *result.cluster;
  if (!c.records.empty()) rep.tables.push_back(records_table(c, result.bytes));
  if (!c.target.empty()) add_recommendation(c, result.bytes, rep);
}

}  // namespace lite::cache

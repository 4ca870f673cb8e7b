// Cluster sizing's option rules and its recommendation (see cluster.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/cache/cluster.hpp"
#include "lite/cache/policies.hpp"
#include "lite/cache/recommend.hpp"
#include "lite/cache/route.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

namespace {

// K node simulators per cluster, each with its empty state (LHD ~4 MB): bounded like the plain sweep.
void check_cluster_memory(const SimulationConfig& o) {
  uint64_t per_size = 0;
  for (const auto& p : o.policies) per_size += empty_simulator_bytes(p, o.bytes);
  uint64_t nodes = 0;
  for (uint32_t k : o.cluster.nodes) nodes += k;
  const uint64_t n_sizes = o.sizes.empty() ? auto_size_fractions().size() : o.sizes.size();
  const double total = double(per_size) * double(nodes) * double(n_sizes);
  if (total > double(kMaxSweepBytes))
    throw OptionError("nodes",
                      fmt::format("{} node simulators per size x {} sizes need about {} before caching anything, more "
                                  "than the {} a sweep may take",
                                  nodes * o.policies.size(), n_sizes, format_bytes(total), format_bytes(double(kMaxSweepBytes))),
                      "give fewer or smaller node counts, fewer sizes, or fewer policies");
}

}  // namespace

void check_cluster_options(const SimulationConfig& o) {
  const ClusterSpec& c = o.cluster;
  find_route(c.route);  // an unknown route is refused with or without --nodes
  option_rules::finite("max_node_load", c.max_node_load);
  if (!(c.max_node_load > 1 && c.max_node_load <= double(kMaxClusterNodes)))  // the hottest of K nodes carries <= K x the mean
    throw OptionError("max_node_load", fmt::format("{} is not above 1 and at most {}", c.max_node_load, kMaxClusterNodes),
                      "give the hottest node's most requests over the mean, e.g. 1.5");
  if (c.virtual_nodes == 0 || c.virtual_nodes > 100000)
    throw OptionError("virtual_nodes", fmt::format("{} is outside 1..100000", c.virtual_nodes),
                      "e.g. 160, memcached ketama's points per node");
  if (c.nodes.empty()) return;
  for (uint32_t k : c.nodes)
    if (k == 0 || k > kMaxClusterNodes)
      throw OptionError("nodes", fmt::format("{} is outside 1..{}", k, kMaxClusterNodes),
                        "give the number of cache servers, e.g. 4 or 1,2,4,8");
  if (o.sample_rate < 1 || o.sample_objects || o.sample_check)
    throw OptionError("nodes", "cannot be combined with sampling ({sample_rate}, {sample_objects}, {sample_check})",
                      "simulate clusters on the full trace: drop the sampling options");
  check_cluster_memory(o);
}

namespace {

// Less total memory first; at equal totals fewer nodes (fewer servers to run), then the lower miss ratio.
bool smaller(const ClusterRecommendation& a, const ClusterRecommendation& b) {
  if (a.size != b.size) return a.size < b.size;
  if (*a.nodes != *b.nodes) return *a.nodes < *b.nodes;
  return a.hit_ratio > b.hit_ratio;
}

ClusterRecommendation smallest_meeting(const ClusterResult& cluster, const SimulationConfig& opt, const PolicySpec& p,
                                       const std::string& variant) {
  ClusterRecommendation best;
  best.policy = p.label();
  best.variant = variant;
  best.offline_bound = find_policy(p.name).needs_next_access;
  for (const auto& r : cluster.records) {
    if (r.policy != best.policy || r.max_over_mean > cluster.max_node_load + 1e-12) continue;
    const std::optional<double> p99 = p99_of(r, variant);
    const double hit_ratio = 1.0 - r.counters.miss_ratio();
    if (!meets_sizing_target(hit_ratio, p99, opt)) continue;
    ClusterRecommendation c = best;
    c.nodes = r.nodes;
    c.node_size = r.node_size;
    c.size = r.size;  // the simulated total: node_size x nodes only differs by rounding down, which must not win
    c.hit_ratio = hit_ratio;
    c.max_over_mean = r.max_over_mean;
    c.p99_ms = p99;
    if (!best.nodes || smaller(c, best)) best = c;
  }
  return best;
}

}  // namespace

bool recommend_cluster(ClusterResult& cluster, const SimulationConfig& opt) {
  cluster.per_policy.clear();
  cluster.best.reset();
  if (!opt.target_hit_ratio && !opt.target_p99_ms) return true;
  cluster.target = sizing_target_text(opt);
  const std::vector<std::string> variants = sizing_variants(opt);
  bool online = false;
  for (const auto& p : opt.policies) online = online || !find_policy(p.name).needs_next_access;
  for (const auto& p : opt.policies)
    for (const auto& v : variants) {
      cluster.per_policy.push_back(smallest_meeting(cluster, opt, p, v));
      const ClusterRecommendation& c = cluster.per_policy.back();
      if (!c.nodes || (online && c.offline_bound)) continue;
      if (!cluster.best || smaller(c, *cluster.best)) cluster.best = c;
    }
  return cluster.best.has_value();
}

}  // namespace lite::cache

#pragma once
// Cluster sizing (--nodes K): K cache servers of C/K each behind a key router (route.hpp), simulated in the
// same main pass as the single caches. What is public here is pure (tests call it on hand-made records):
// the option rules and the recommendation. The simulator itself is cluster_internal.hpp.
#include "lite/cache/cache_sim.hpp"

namespace lite::cache {

// The value rules of config.cluster (validate() calls it): OptionError by key ("nodes", "route",
// "virtual_nodes", "max_node_load") for 0 nodes, an unknown route, a load bound <= 1, sampling, and a
// sweep whose node simulators would take more than kMaxSweepBytes.
void check_cluster_options(const SimulationConfig& config);

// The smallest cluster meeting config's --target-* with the hottest node at most max_node_load x the mean:
// per policy (x model variant) the record with the least total size, ties to fewer nodes; the best is the
// least total size over the policies (Belady only when nothing else was simulated). Fills target,
// per_policy and best of `cluster`; returns whether the target was reached.
bool recommend_cluster(ClusterResult& cluster, const SimulationConfig& config);

}  // namespace lite::cache

namespace lite::cache {
// The cluster tables (per policy x size x K, and the recommendation) and its finding (report.cpp calls it).
void add_cluster_report(const CacheSimResult& result, report::Report& rep);
}  // namespace lite::cache

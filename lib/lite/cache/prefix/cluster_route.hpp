#pragma once
// Routers of a prefix cluster (--instances K --route NAME): which of K instances, each with its own local KV pool,
// serves a request, as a serving cluster's request router decides. One router per route_<name>.cpp, registered
// in the one table (cluster_routes.cpp) that drives --route's names, "did you mean" and the tests. A router is a
// pure function of the request and the instances' state, so a replay is deterministic. Internal to the prefix
// mode (docs/cache-sim.md "Cluster of instances").
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lite/cache/prefix/block_cache.hpp"

namespace lite::cache::prefix {

// What a router may read: the trace, each instance's cache, and each instance's load so far.
struct ClusterView {
  const BlockTrace* trace = nullptr;
  const std::vector<std::unique_ptr<BlockCache>>* caches = nullptr;
  const std::vector<uint64_t>* prefill_tokens = nullptr;  // per instance: prompt tokens it computed (not hit)
  uint32_t instances() const { return uint32_t(prefill_tokens->size()); }
};

struct PrefixRouteEntry {
  const char* name;         // "prefix-affinity"
  const char* description;  // the rule, one line
  uint32_t (*pick)(const ClusterView& view, size_t request);
};

const std::vector<PrefixRouteEntry>& prefix_route_table();
std::vector<std::string> prefix_route_names();
bool is_prefix_route(const std::string& name);
// Throws OptionError("route") naming the prefix routes and the closest one.
const PrefixRouteEntry& find_prefix_route(const std::string& name);
// "random,session" or "all" -> the routes, in the table's order for "all". OptionError("route").
std::vector<const PrefixRouteEntry*> parse_prefix_routes(const std::string& text);

// The load the routers weigh: the instance that has computed the fewest prefill tokens so far (the lowest index
// among equals); among `candidates` when given.
uint32_t least_loaded(const ClusterView& view, const std::vector<uint32_t>* candidates = nullptr);
// splitmix64: the seeded hash random and session routing draw from.
uint64_t mix64(uint64_t x);

uint32_t route_random(const ClusterView& view, size_t request);
uint32_t route_round_robin(const ClusterView& view, size_t request);
uint32_t route_least_loaded(const ClusterView& view, size_t request);
uint32_t route_session(const ClusterView& view, size_t request);
uint32_t route_prefix_affinity(const ClusterView& view, size_t request);

}  // namespace lite::cache::prefix

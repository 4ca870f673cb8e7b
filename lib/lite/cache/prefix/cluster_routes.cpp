// The prefix cluster's route table (cluster_route.hpp): the one place a prefix router is registered.
#include <fmt/format.h>

#include "lite/cache/prefix/cluster_route.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::prefix {

const std::vector<PrefixRouteEntry>& prefix_route_table() {
  static const std::vector<PrefixRouteEntry> table = {
      {"random", "a uniformly random instance, seeded (splitmix64 of the request's index): the same every run",
       route_random},
      {"round-robin", "instance r mod K for the r-th request", route_round_robin},
      {"least-loaded", "the instance that has computed the fewest prefill tokens so far", route_least_loaded},
      {"session", "a hash of the request's first block: one system prompt, one instance", route_session},
      {"prefix-affinity", "the instance whose cache holds the longest prefix of the prompt, ties to the least loaded "
                          "(cache-aware routers)", route_prefix_affinity},
  };
  return table;
}

std::vector<std::string> prefix_route_names() {
  std::vector<std::string> names;
  for (const auto& e : prefix_route_table()) names.push_back(e.name);
  return names;
}

bool is_prefix_route(const std::string& name) {
  for (const auto& e : prefix_route_table())
    if (name == e.name) return true;
  return false;
}

const PrefixRouteEntry& find_prefix_route(const std::string& name) {
  return find_named(prefix_route_table(), name, "route", "prefix cluster route",
                    [](const PrefixRouteEntry& e) { return std::vector<std::string>{e.name}; },
                    "a prefix trace's --instances are routed by these (docs/cache-sim.md)");
}

std::vector<const PrefixRouteEntry*> parse_prefix_routes(const std::string& text) {
  std::vector<const PrefixRouteEntry*> routes;
  for (const auto& item : split(text, ',')) {
    if (trim(item) == "all") {
      routes.clear();
      for (const auto& e : prefix_route_table()) routes.push_back(&e);
      return routes;
    }
    routes.push_back(&find_prefix_route(trim(item)));
  }
  return routes;
}

uint32_t least_loaded(const ClusterView& view, const std::vector<uint32_t>* candidates) {
  const std::vector<uint64_t>& load = *view.prefill_tokens;
  uint32_t best = candidates ? candidates->front() : 0;
  auto consider = [&](uint32_t i) {
    if (load[i] < load[best]) best = i;
  };
  if (candidates)
    for (uint32_t i : *candidates) consider(i);
  else
    for (uint32_t i = 0; i < load.size(); ++i) consider(i);
  return best;
}

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace lite::cache::prefix

// The router table (see route.hpp): the one place a --route scheme is registered.
#include <fmt/format.h>

#include "lite/cache/route.hpp"
#include "lite/core/registry.hpp"

namespace lite::cache {

// The cost columns (seconds per million requests, one core, in the units of sweep.cpp's policy table): `lite
// cache-sim --threads 1 --policy fifo --sizes 20000` on a 2M-request Zipf(1.0) oracleGeneral trace over 200K
// keys (gen_zipf_trace.py --seed 5), with and without one cluster, best of 3; the cluster's time less one FIFO's
// and the regrouping (sweep.cpp), scaled to that table by its FIFO cost; 2-core AMD EPYC at load ~5,
// 2026-12-02. ketama: 16 to 256 nodes within 20% (a binary search over K x 160 points); rendezvous: 4 and 64
// nodes, linear in K (one hash per node per request); modulo: 1 and 16 nodes.
const std::vector<RouteEntry>& route_table() {
  static const std::vector<RouteEntry> table = {
      {"ketama",
       "consistent hashing: 160 points per node (--virtual-nodes) on a 64-bit hash ring, a key goes to the next point "
       "clockwise (memcached's ketama, with splitmix64 in place of MD5)",
       detail::make_ketama_router, 0.008, 0.0},
      {"rendezvous", "highest random weight: a key goes to the node whose hash of (key, node) is largest", 
       detail::make_rendezvous_router, 0.0, 0.0015},
      {"modulo", "key mod K on the trace's integer key (a naive client; every key moves when K changes)",
       detail::make_modulo_router, 0.001, 0.0},
  };
  return table;
}

const RouteEntry& find_route(const std::string& name) {
  return find_named(route_table(), name, "route", "route",
                    [](const RouteEntry& e) { return std::vector<std::string>{e.name}; });
}

std::vector<std::string> route_names() {
  std::vector<std::string> names;
  for (const auto& e : route_table()) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<Router> make_router(const std::string& name, uint32_t nodes, uint32_t virtual_nodes) {
  return find_route(name).make(nodes, virtual_nodes);
}

}  // namespace lite::cache

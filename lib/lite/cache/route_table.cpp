// The router table (see route.hpp): the one place a --route scheme is registered.
#include <fmt/format.h>

#include "lite/cache/route.hpp"
#include "lite/core/registry.hpp"

namespace lite::cache {

const std::vector<RouteEntry>& route_table() {
  static const std::vector<RouteEntry> table = {
      {"ketama",
       "consistent hashing: 160 points per node (--virtual-nodes) on a 64-bit hash ring, a key goes to the next point "
       "clockwise (memcached's ketama, with splitmix64 in place of MD5)",
       detail::make_ketama_router},
      {"rendezvous", "highest random weight: a key goes to the node whose hash of (key, node) is largest", 
       detail::make_rendezvous_router},
      {"modulo", "key mod K on the trace's integer key (a naive client; every key moves when K changes)",
       detail::make_modulo_router},
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

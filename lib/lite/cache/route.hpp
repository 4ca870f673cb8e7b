#pragma once
// Key routers for cluster sizing (--nodes K --route NAME): which of K cache servers a key goes to, the
// way a client library of memcached/Redis picks a server. One router per route_<name>.cpp, registered in
// the one table below (route_table.cpp), which drives --route parsing, "did you mean", the help text and
// the tests that loop over every router. Torch-free.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lite::cache {

// A router is built once for K nodes and then only read (one per simulated cluster, used by one thread).
class Router {
 public:
  virtual ~Router() = default;
  // `key` is the trace's key, `hash` its 64-bit hash (hash_key(key), the engine computes it per request).
  virtual uint32_t node_of(uint64_t key, uint64_t hash) const = 0;
};

struct RouteEntry {
  const char* name;         // "ketama"
  const char* description;  // one line: the scheme and whom it follows
  std::unique_ptr<Router> (*make)(uint32_t nodes, uint32_t virtual_nodes);
  // Measured seconds per million requests routed, one core (route_table.cpp says how): fixed, and per node
  // of the cluster. lite-mpi balances clusters by it (sweep.hpp's cluster_slot_cost).
  double cost = 0;
  double cost_per_node = 0;
};

// memcached's ketama (libketama, libmemcached) places 160 points per server on its ring.
constexpr uint32_t kKetamaPointsPerNode = 160;
// The most nodes one cluster may have: one simulator per node, each with its own table.
constexpr uint32_t kMaxClusterNodes = 4096;

const std::vector<RouteEntry>& route_table();
// Throws OptionError("route", "unknown route 'x'; did you mean 'y'?", "known: ...").
const RouteEntry& find_route(const std::string& name);
std::vector<std::string> route_names();
std::unique_ptr<Router> make_router(const std::string& name, uint32_t nodes, uint32_t virtual_nodes = kKetamaPointsPerNode);

namespace detail {
std::unique_ptr<Router> make_ketama_router(uint32_t nodes, uint32_t virtual_nodes);
std::unique_ptr<Router> make_rendezvous_router(uint32_t nodes, uint32_t virtual_nodes);
std::unique_ptr<Router> make_modulo_router(uint32_t nodes, uint32_t virtual_nodes);
// splitmix64's finaliser: the 64-bit hash the ring points and rendezvous weights are drawn from.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace detail

}  // namespace lite::cache

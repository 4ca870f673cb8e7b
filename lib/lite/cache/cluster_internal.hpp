#pragma once
// The cluster simulator (cluster_sim.cpp): one consumer of the engine's batch stream per (policy, total
// size, K) that routes every request to one of its K node simulators, so a cluster costs one routing step
// per request on top of its nodes' own work, and the engine's pool runs the clusters on its threads.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lite/cache/engine_internal.hpp"
#include "lite/cache/route.hpp"

namespace lite::cache::detail {

class ClusterSimulator final : public Simulator {
 public:
  ClusterSimulator(const PolicySpec& policy, uint32_t nodes, uint64_t node_size, bool bytes, std::unique_ptr<Router> router);
  void run(const Batch& b) override;
  size_t memory_bytes() const override;
  const std::vector<std::unique_ptr<Simulator>>& nodes() const { return nodes_; }

 private:
  void run_chunk(const Batch& b, size_t begin, size_t end);

  std::vector<std::unique_ptr<Simulator>> nodes_;
  std::unique_ptr<Router> router_;
  Batch scratch_;                  // one node's requests of a chunk, in trace order
  std::vector<uint32_t> node_of_;  // per request of the chunk
  std::vector<uint32_t> order_;    // the chunk's requests grouped by node (a counting sort)
  std::vector<uint32_t> start_;    // node n's requests are order_[start_[n] .. start_[n+1])
  std::vector<uint32_t> fill_;     // the counting sort's next free place per node
};

struct ClusterSlot {
  size_t policy = 0, size = 0;
  uint32_t nodes = 1;
  std::unique_ptr<ClusterSimulator> sim;
};
struct ClusterSet {
  std::vector<ClusterSlot> slots;  // this process's: policy-major, sizes ascending, then config.cluster.nodes' order
  size_t n_clusters = 0;             // clusters of the whole sweep, on this process or another
  std::vector<std::string> skipped;  // "lru @ 3 over 4 nodes": a node would get size 0 (the whole sweep's)
  bool wants_next = false;           // a cluster here runs Belady
  std::vector<Simulator*> consumers() const;
};
// Whether this process simulates the cluster at (policy, size position, position in config.cluster.nodes).
using ClusterFilter = std::function<bool(size_t policy, size_t size_position, size_t nodes_position)>;
// One cluster per policy x size x K of config.cluster (none without --nodes) that `mine` keeps.
ClusterSet build_clusters(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes, const ClusterFilter& mine);
// result.cluster from the clusters after the main pass, with the cost model of result.cost_model.
void collect_cluster_records(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes, const ClusterSet& set,
                             CacheSimResult& result);

}  // namespace lite::cache::detail

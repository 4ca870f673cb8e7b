// The cluster simulator and the records of a simulated cluster (see cluster_internal.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "lite/cache/cluster_internal.hpp"

namespace lite::cache::detail {
namespace {
// Requests routed per step: a small scratch batch per cluster (128 KiB), since a sweep may hold hundreds.
constexpr size_t kClusterChunk = 4096;
}  // namespace

ClusterSimulator::ClusterSimulator(const PolicySpec& policy, uint32_t nodes, uint64_t node_size, bool bytes,
                                   std::unique_ptr<Router> router)
    : router_(std::move(router)) {
  for (uint32_t n = 0; n < nodes; ++n) nodes_.push_back(make_simulator(policy, node_size, bytes));
  scratch_.reserve(kClusterChunk);
  node_of_.resize(kClusterChunk);
  order_.resize(kClusterChunk);
  start_.resize(size_t(nodes) + 1);
  fill_.resize(nodes);
}

size_t ClusterSimulator::memory_bytes() const {
  size_t total = 0;
  for (const auto& n : nodes_) total += n->memory_bytes();
  return total;
}

void ClusterSimulator::run(const Batch& b) {
  for (size_t begin = 0; begin < b.n; begin += kClusterChunk) run_chunk(b, begin, std::min(b.n, begin + kClusterChunk));
  counters = {};
  for (const auto& n : nodes_) {
    counters.n_req += n->counters.n_req;
    counters.n_miss += n->counters.n_miss;
    counters.n_req_byte += n->counters.n_req_byte;
    counters.n_miss_byte += n->counters.n_miss_byte;
  }
}

// Routes the chunk, groups its requests by node keeping trace order within a node, and hands each node its
// own requests: every node sees exactly the subsequence of the trace its keys make.
void ClusterSimulator::run_chunk(const Batch& b, size_t begin, size_t end) {
  const size_t n = end - begin;
  const size_t k = nodes_.size();
  std::fill(start_.begin(), start_.end(), 0);
  for (size_t i = 0; i < n; ++i) {
    node_of_[i] = router_->node_of(b.key[begin + i], b.hash[begin + i]);
    ++start_[node_of_[i] + 1];
  }
  for (size_t j = 1; j <= k; ++j) start_[j] += start_[j - 1];
  std::copy(start_.begin(), start_.end() - 1, fill_.begin());
  for (size_t i = 0; i < n; ++i) order_[fill_[node_of_[i]]++] = uint32_t(i);
  scratch_.has_cost = b.has_cost;
  scratch_.has_next = b.has_next;
  for (size_t node = 0; node < k; ++node) {
    if (start_[node] == start_[node + 1]) continue;
    scratch_.n = 0;
    for (uint32_t o = start_[node]; o < start_[node + 1]; ++o) {
      const size_t src = begin + order_[o];
      const size_t dst = scratch_.n++;
      scratch_.key[dst] = b.key[src];
      scratch_.hash[dst] = b.hash[src];
      scratch_.size[dst] = b.size[src];
      if (b.has_cost) scratch_.cost[dst] = b.cost[src];
      if (b.has_next) scratch_.next[dst] = b.next[src];  // global indices keep their order within the node
    }
    nodes_[node]->run(scratch_);
  }
}

std::vector<Simulator*> ClusterSet::consumers() const {
  std::vector<Simulator*> out;
  for (const auto& s : slots) out.push_back(s.sim.get());
  return out;
}

ClusterSet build_clusters(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes, const ClusterFilter& mine) {
  ClusterSet set;
  for (size_t p = 0; p < opt.policies.size(); ++p)
    for (size_t s = 0; s < sizes.size(); ++s)
      for (size_t c = 0; c < opt.cluster.nodes.size(); ++c) {
        const uint32_t k = opt.cluster.nodes[c];
        const uint64_t node_size = sizes[s].size / k;
        if (node_size == 0) {
          set.skipped.push_back(fmt::format("{} @ {} over {} nodes", opt.policies[p].label(), size_label(sizes[s].size, opt.bytes), k));
          continue;
        }
        ++set.n_clusters;
        if (!mine(p, s, c)) continue;
        ClusterSlot slot{p, s, k, nullptr};
        slot.sim = std::make_unique<ClusterSimulator>(opt.policies[p], k, node_size, opt.bytes,
                                                      make_router(opt.cluster.route, k, opt.cluster.virtual_nodes));
        set.wants_next = set.wants_next || find_policy(opt.policies[p].name).needs_next_access;
        set.slots.push_back(std::move(slot));
      }
  return set;
}

namespace {

std::optional<LatencyFigures> latency_of(const SimulationConfig& opt, const std::string& cost_model, const Counters& c,
                                         const MissCostStats& misses) {
  if (cost_model == "constant") return latency_constant(c, opt.hit_latency_ms, *opt.miss_latency_ms);
  if (cost_model == "cost column") return latency_from_costs(c, opt.hit_latency_ms, misses);
  return std::nullopt;
}

ClusterRecord cluster_record(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes, const ClusterSlot& slot,
                             const std::string& cost_model) {
  ClusterRecord r;
  r.policy = opt.policies[slot.policy].label();
  r.size = sizes[slot.size].size;
  r.size_text = sizes[slot.size].text;
  r.nodes = slot.nodes;
  r.node_size = r.size / slot.nodes;
  r.counters = slot.sim->counters;
  MissCostStats all_misses;
  for (const auto& node : slot.sim->nodes()) {
    r.per_node.push_back(node->counters);
    r.per_node_latency.push_back(latency_of(opt, cost_model, node->counters, node->miss_cost));
    all_misses.merge(node->miss_cost);
    if (node->counters.n_req > r.per_node[r.hottest].n_req) r.hottest = uint32_t(r.per_node.size() - 1);
  }
  const Counters& hot = r.per_node[r.hottest];
  const double mean = double(r.counters.n_req) / double(slot.nodes);
  r.max_over_mean = mean > 0 ? double(hot.n_req) / mean : 1.0;
  r.hottest_hit_ratio = hot.n_req ? 1.0 - hot.miss_ratio() : 0.0;
  r.latency = latency_of(opt, cost_model, r.counters, all_misses);
  if (r.per_node_latency[r.hottest]) r.hottest_p99_ms = r.per_node_latency[r.hottest]->p99_ms;
  if (cost_model == "constant") r.miss_cost_s = double(r.counters.n_miss) * *opt.miss_latency_ms / 1000.0;
  if (cost_model == "cost column") r.miss_cost_s = all_misses.sum() / 1000.0;
  if (cost_model == "profiles")
    for (const auto& v : opt.variants) {
      r.variants.emplace_back(v.label, latency_from_variant(r.counters, opt.hit_latency_ms, v));
      if (!r.hottest_p99_ms) r.hottest_p99_ms = latency_from_variant(hot, opt.hit_latency_ms, v).p99_ms;
    }
  return r;
}

}  // namespace

void collect_cluster_records(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes, const ClusterSet& set,
                             CacheSimResult& result) {
  ClusterResult c;
  c.route = opt.cluster.route;
  c.virtual_nodes = opt.cluster.route == "ketama" ? opt.cluster.virtual_nodes : 0;
  c.max_node_load = opt.cluster.max_node_load;
  for (const auto& slot : set.slots) c.records.push_back(cluster_record(opt, sizes, slot, result.cost_model));
  if (!set.skipped.empty())
    result.notes.push_back(fmt::format("{{nodes}}: {} cluster{} not simulated, a node would get size 0 ({}{})",
                                       set.skipped.size(), set.skipped.size() == 1 ? "" : "s", set.skipped.front(),
                                       set.skipped.size() > 1 ? ", ..." : ""));
  result.cluster = std::move(c);
}

}  // namespace lite::cache::detail

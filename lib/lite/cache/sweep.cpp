// Splitting a sweep over processes (see sweep.hpp): the cost model, LPT balancing, and joining the
// records on rank 0.
#include "lite/cache/sweep.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include "lite/cache/cluster.hpp"
#include "lite/cache/policies.hpp"
#include "lite/cache/recommend.hpp"
#include "lite/cache/record_store.hpp"
#include "lite/cache/engine_internal.hpp"
#include "lite/cache/route.hpp"
#include "lite/core/options.hpp"

namespace lite::cache {
namespace {

// Seconds per million requests of one simulator, one core, object mode: measured with `lite cache-sim
// --threads 1` on a 2M-request Zipf(1.0) oracleGeneral trace over 200K keys (gen_zipf_trace.py --seed 5), four
// sizes of 1-75% of the keys, twice, the read cost (one FIFO of size 1) subtracted; 2-core AMD EPYC at load ~3,
// 2026-12-01. Only the ratios matter to the balancing (SIEVE to GDSF: 5.8x); a policy missing here costs as
// much as the dearest.
const std::map<std::string, double>& measured_cost() {
  static const std::map<std::string, double> cost = {
      {"lru", 0.027},   {"fifo", 0.029}, {"lfu", 0.041},    {"arc", 0.035},      {"2q", 0.031},
      {"s3fifo", 0.029}, {"sieve", 0.021}, {"clock", 0.026}, {"belady", 0.036}, {"slru", 0.033},
      {"gdsf", 0.121},  {"wtinylfu", 0.111}, {"lirs", 0.088}, {"lecar", 0.105}, {"lhd", 0.106},
  };
  return cost;
}

// Belady's backward next-access pass (traces without next accesses), per rank that runs any Belady slot, in
// the same units: estimated (a scan writing the key file plus a backward pass over it with one table lookup per
// request: about two simulators' worth), not measured.
constexpr double kNextPassCost = 0.060;
// The one-pass LRU curve (Mattson over a Fenwick tree): a little dearer than one LRU simulator.
constexpr double kCurveCost = 0.050;
// A cluster's regrouping of each batch by node (a counting sort and a copy into its scratch batch), on top of
// its router's cost: measured with the routers' (route_table.cpp), as a 1-node modulo cluster over one FIFO.
constexpr double kClusterRegroupCost = 0.003;

}  // namespace

double slot_cost(const PolicySpec& policy, bool sample_check) {
  const auto& table = measured_cost();
  auto it = table.find(policy.name);
  double c = 0;
  if (it != table.end()) {
    c = it->second;
  } else {
    for (const auto& [name, v] : table) c = std::max(c, v);
  }
  return sample_check ? 2 * c : c;
}

double policy_setup_cost(const PolicySpec& policy) {
  return find_policy(policy.name).needs_next_access ? kNextPassCost : 0.0;
}

double curve_cost() { return kCurveCost; }

double cluster_slot_cost(const PolicySpec& policy, const std::string& route, uint32_t nodes) {
  const RouteEntry& r = find_route(route);
  return slot_cost(policy, false) + kClusterRegroupCost + r.cost + r.cost_per_node * double(nodes);
}

namespace {

// The resolved size list when it is known before any pass (every size absolute): ascending, unique, as
// resolve_sizes() makes it. Empty otherwise.
std::vector<uint64_t> sizes_known_in_advance(const SimulationConfig& config) {
  std::vector<uint64_t> sizes;
  for (const auto& s : config.sizes) {
    if (s.fraction > 0) return {};
    sizes.push_back(s.absolute);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

}  // namespace

namespace {
size_t size_positions(const SimulationConfig& config) {
  return config.sizes.empty() ? auto_size_fractions().size() : config.sizes.size();
}
}  // namespace

size_t slot_index(const SimulationConfig& config, size_t policy, size_t size_position) {
  return policy * size_positions(config) + size_position;
}

size_t cluster_slot_index(const SimulationConfig& config, size_t policy, size_t size_position, size_t nodes_position) {
  const size_t n_sizes = size_positions(config), n_k = config.cluster.nodes.size();
  return config.policies.size() * n_sizes + (policy * n_sizes + size_position) * n_k + nodes_position;
}

std::vector<SweepSlot> sweep_slots(const SimulationConfig& config, const RecordStore* store) {
  const size_t n_sizes = size_positions(config);
  const std::vector<uint64_t> known = store ? sizes_known_in_advance(config) : std::vector<uint64_t>{};
  std::vector<SweepSlot> slots;
  for (size_t p = 0; p < config.policies.size(); ++p)
    for (size_t k = 0; k < n_sizes; ++k) {
      double cost = slot_cost(config.policies[p], config.sample_check);
      if (!known.empty() && (k >= known.size() || store->find(config.policies[p].label(), known[k]))) cost = 0;
      slots.push_back({p, k, cost});
    }
  // a cluster whose nodes would get size 0 is not simulated; the split cannot know that before the sizes
  // are resolved and counts it anyway
  for (size_t p = 0; p < config.policies.size(); ++p)
    for (size_t k = 0; k < n_sizes; ++k)
      for (size_t c = 0; c < config.cluster.nodes.size(); ++c)
        slots.push_back({p, k, cluster_slot_cost(config.policies[p], config.cluster.route, config.cluster.nodes[c]), c + 1});
  return slots;
}

namespace {

// A unit of scheduling: one slot, or several slots of a policy with a setup cost that go to one part together.
struct Job {
  double cost = 0;
  std::vector<size_t> slots;
};

// A policy with a setup cost (Belady) as k jobs of consecutive slots, each paying the setup: k = 1 keeps its
// pass on one part; more chunks shorten the longest job but add (k-1) setups of work. The k that minimises
// max(longest chunk, mean load after the extra setups) is taken.
void add_setup_jobs(const std::vector<size_t>& members, const std::vector<SweepSlot>& slots, double setup,
                    double total, int parts, std::vector<Job>& jobs) {
  double sum = 0;
  for (size_t i : members) sum += slots[i].cost;
  size_t best_k = 1;
  double best = std::numeric_limits<double>::max();
  for (size_t k = 1; k <= members.size(); ++k) {
    const double bound = std::max(setup + sum / double(k), (total + double(k - 1) * setup) / parts);
    if (bound < best - 1e-12) best = bound, best_k = k;
  }
  for (size_t c = 0; c < best_k; ++c) {
    Job job{setup, {}};
    for (size_t j = c * members.size() / best_k; j < (c + 1) * members.size() / best_k; ++j) {
      job.slots.push_back(members[j]);
      job.cost += slots[members[j]].cost;
    }
    jobs.push_back(std::move(job));
  }
}

}  // namespace

std::vector<int> balance_slots(const std::vector<SweepSlot>& slots, const std::vector<double>& setup_cost_of_policy,
                               int parts, const std::vector<double>& preload) {
  parts = std::max(parts, 1);
  auto setup = [&](size_t policy) { return policy < setup_cost_of_policy.size() ? setup_cost_of_policy[policy] : 0.0; };
  std::map<size_t, std::vector<size_t>> with_setup;  // policy -> its slots, in order
  double total = 0;
  for (double p : preload) total += p;
  std::vector<Job> jobs;
  for (size_t i = 0; i < slots.size(); ++i) {
    total += slots[i].cost;
    if (setup(slots[i].policy) > 0 && slots[i].cost > 0) with_setup[slots[i].policy].push_back(i);  // 0: reused
    else jobs.push_back({slots[i].cost, {i}});
  }
  for (const auto& [policy, members] : with_setup) total += setup(policy);
  for (const auto& [policy, members] : with_setup) add_setup_jobs(members, slots, setup(policy), total, parts, jobs);
  // LPT: longest first (ties in slot order, so every rank computes the same split) to the least-loaded part
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.cost > b.cost; });
  std::vector<double> load(static_cast<size_t>(parts), 0.0);
  for (size_t i = 0; i < preload.size() && i < load.size(); ++i) load[i] = preload[i];
  std::vector<int> owner(slots.size(), 0);
  for (const auto& job : jobs) {
    const size_t best = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    load[best] += job.cost;
    for (size_t i : job.slots) owner[i] = int(best);
  }
  return owner;
}

std::vector<double> part_loads(const std::vector<SweepSlot>& slots, const std::vector<double>& setup_cost_of_policy,
                               const std::vector<int>& owner, int parts, const std::vector<double>& preload) {
  std::vector<double> load(static_cast<size_t>(std::max(parts, 1)), 0.0);
  for (size_t i = 0; i < preload.size() && i < load.size(); ++i) load[i] = preload[i];
  std::map<std::pair<size_t, int>, bool> has_policy;
  for (size_t i = 0; i < slots.size(); ++i) {
    const int part = owner.at(i);
    load.at(size_t(part)) += slots[i].cost;
    if (!has_policy[{slots[i].policy, part}] && slots[i].policy < setup_cost_of_policy.size())
      load[size_t(part)] += setup_cost_of_policy[slots[i].policy];
    has_policy[{slots[i].policy, part}] = true;
  }
  return load;
}

void check_shareable_trace(const std::string& trace) {
  if (trace == "-" || detail::is_stream(trace))
    throw OptionError("trace", "every MPI rank reads the trace itself, so it cannot be a stream (stdin, a FIFO)",
                      "give a trace file that every rank can read");
}

void finish_sweep(CacheSimResult& result, const SimulationConfig& config) {
  // here, not where the curve is computed, so that one process and an MPI job (whose rank 0 combines the
  // partitions' curves, some of them from other ranks) put it at the same place among the notes
  if (result.mrc && result.mrc->bytes && result.mrc->sizes_vary)
    result.notes.push_back("{mrc}: some objects change size between requests; the one-pass byte curve keeps each object's "
                           "latest size, while the simulators keep the size at insertion, so they can differ");
  // requests the (sampled) simulators saw: the same in every record, whichever process simulated it
  if (!result.records.empty() && result.records.front().sampled_counters)
    result.trace.n_req = result.records.front().sampled_counters->n_req;
  if (config.sample_check) result.sampling_check = detail::check_sampling(result.records, config.bytes);
  if (config.target_hit_ratio || config.target_p99_ms) result.recommendation = recommend(result, config);
  if (result.recommendation && !result.recommendation->reached) result.gates.fail("target");
  if (result.cluster) {  // with --nodes the question is the cluster's: its target alone decides the exit code
    auto& failed = result.gates.failed;
    failed.erase(std::remove(failed.begin(), failed.end(), std::string("target")), failed.end());
    if (!recommend_cluster(*result.cluster, config)) result.gates.fail("cluster_target");
  }
}

namespace {

// The other processes' clusters joined into result.cluster in build order: policy-major, sizes ascending,
// then the order of config.cluster.nodes.
void merge_clusters(CacheSimResult& result, const SimulationConfig& config, std::vector<ClusterRecord> others,
                    const std::map<std::string, size_t>& policy_index) {
  if (!result.cluster) return;  // no process had a cluster to simulate (every node would get size 0)
  auto& records = result.cluster->records;
  for (auto& r : others) records.push_back(std::move(r));
  const auto& ks = config.cluster.nodes;
  auto place_of = [&](const ClusterRecord& r) {
    auto it = policy_index.find(r.policy);
    const size_t k = size_t(std::find(ks.begin(), ks.end(), r.nodes) - ks.begin());
    return std::make_tuple(it == policy_index.end() ? config.policies.size() : it->second, r.size, k);
  };
  std::stable_sort(records.begin(), records.end(),
                   [&](const ClusterRecord& a, const ClusterRecord& b) { return place_of(a) < place_of(b); });
}

}  // namespace

void merge_sweep(CacheSimResult& result, const SimulationConfig& config, SweepPart others) {
  for (auto& r : others.records) result.records.push_back(std::move(r));
  std::map<std::string, size_t> policy_index;
  for (size_t p = 0; p < config.policies.size(); ++p) policy_index.emplace(config.policies[p].label(), p);
  auto rank_of = [&](const SimRecord& r) {
    auto it = policy_index.find(r.policy);
    return std::make_pair(it == policy_index.end() ? config.policies.size() : it->second, r.size);
  };
  std::stable_sort(result.records.begin(), result.records.end(),
                   [&](const SimRecord& a, const SimRecord& b) { return rank_of(a) < rank_of(b); });
  merge_clusters(result, config, std::move(others.clusters), policy_index);
  result.simulations += others.simulated;
  result.reused_records += others.reused;
  finish_sweep(result, config);
}

}  // namespace lite::cache

#pragma once
// A sweep split over several processes (lite-mpi ranks) and resumed from a results folder, with no MPI in
// here: simulate() takes a SweepControl saying which (policy, size) slots and which (policy, size, K)
// clusters (--nodes) this process simulates, which it may take from a RecordStore, and what to call when one
// finishes. The MPI side (apps/lite/mpi_*) only
// decides the split with balance_slots(), moves the records and calls merge_sweep() on rank 0.
//
// Why split by slot rather than by trace range: a slot's result depends on every request before it, so a
// rank must stream the whole trace; it does so once for all of its slots, as the single-process engine does
// for all slots. Why balance by cost, not count: a slot's cost is its policy's per-request cost (measured:
// SIEVE about 5x cheaper than LHD or GDSF), and Belady adds a backward pass over the trace on every rank that
// runs it, so LPT scheduling on estimated cost keeps the slowest rank close to the mean.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lite/cache/cache_sim.hpp"

namespace lite::cache {

class RecordStore;

// One (policy, size) configuration, or with --nodes one (policy, size, K) cluster; `size` is its position in
// the ascending size list, `cluster` 0 for the single cache, else 1 + the position of K in config.cluster.nodes.
struct SweepSlot {
  size_t policy = 0;
  size_t size = 0;
  double cost = 0;  // estimated seconds per million requests (slot_cost, cluster_slot_cost)
  size_t cluster = 0;
};

// Estimated cost of one slot, in seconds per million requests on one core: the policy's measured
// per-request cost (twice with --sample-check: the sampled and the full simulator).
double slot_cost(const PolicySpec& policy, bool sample_check);
// A policy's fixed cost on a rank that runs it at any size, in the same units: Belady's next-access pass.
double policy_setup_cost(const PolicySpec& policy);
// The one-pass LRU curve (--mrc), one consumer on one rank, in the same units.
double curve_cost();
// One cluster of `nodes` nodes of the policy behind `route`, in the same units: its nodes together see every
// request once (the policy's slot cost), plus the routing and the regrouping of each batch by node.
double cluster_slot_cost(const PolicySpec& policy, const std::string& route, uint32_t nodes);

// Every slot of a sweep before the sizes are resolved: policies x the given sizes (or the auto set), then
// with --nodes policies x sizes x config.cluster.nodes (clusters are not stored, so they always cost). The
// resolved list is never longer (equal sizes merge, auto sizes of 0 drop), so a position past its end is
// simply not run. With a store and sizes that are all absolute (known before any pass), a slot whose record
// is already there costs 0, so a re-run balances only the work that is left; with auto sizes or fractions
// of the working set the split cannot know them in advance and ignores the store.
std::vector<SweepSlot> sweep_slots(const SimulationConfig& config, const RecordStore* store = nullptr);
// Where sweep_slots() puts single cache (policy, size position) and cluster (policy, size position, K position).
size_t slot_index(const SimulationConfig& config, size_t policy, size_t size_position);
size_t cluster_slot_index(const SimulationConfig& config, size_t policy, size_t size_position, size_t nodes_position);

// Assigns each slot to one of `parts` processes, longest first to the least-loaded one (LPT), with
// `preload[i]` (e.g. the curve on rank 0) as work already there. A policy with a setup cost (Belady's
// backward pass, paid once per process that runs it) is kept on one process, or cut into as many chunks as
// shorten the sweep despite the extra setups. Deterministic: every rank computes the same answer. Returns
// the part of each slot.
std::vector<int> balance_slots(const std::vector<SweepSlot>& slots, const std::vector<double>& setup_cost_of_policy,
                               int parts, const std::vector<double>& preload = {});
// The estimated load of each part under an assignment (for tests and the benchmark's model).
std::vector<double> part_loads(const std::vector<SweepSlot>& slots, const std::vector<double>& setup_cost_of_policy,
                               const std::vector<int>& owner, int parts, const std::vector<double>& preload = {});

// What one process of a sweep does; simulate() with no control runs every slot itself.
struct SweepControl {
  // Whether this process simulates slot (policy, size position); empty = every slot.
  std::function<bool(size_t policy, size_t size_position)> assigned;
  // --nodes: whether it simulates the cluster of config.cluster.nodes[nodes_position] nodes at (policy, size
  // position); empty = every cluster when `assigned` is empty too, none otherwise.
  std::function<bool(size_t policy, size_t size_position, size_t nodes_position)> assigned_cluster;
  bool run_curve = true;         // this process computes the --mrc curve
  // --mrc-partitions: the partitions this process profiles, left uncombined in result.mrc_partition_curves
  // for another process to combine; empty = every partition, combined into result.mrc.
  std::vector<size_t> curve_partitions;
  RecordStore* store = nullptr;  // --results-dir: records found there are reused, finished ones written
  // Called after each finished record is written to the store (lite-mpi's test hook).
  std::function<void(const SimRecord&)> on_stored;
};

// Runs the simulation of a resolved configuration under `control`. The result holds this process's
// records (reused and simulated, policy-major, sizes ascending) and clusters; with an `assigned` filter the
// recommendations (single cache and cluster), the sampling check and the gates are left to merge_sweep().
CacheSimResult simulate(const SimulationConfig& config, Progress& progress, const SweepControl& control);

// What the other processes of a sweep send to the one that joins it.
struct SweepPart {
  std::vector<SimRecord> records;
  std::vector<ClusterRecord> clusters;
  size_t simulated = 0, reused = 0;
};

// Rank 0: the records and clusters of every process joined into `result` (in the single-process order) and
// the figures that need all of them computed: sampling check, recommendations, gates.
void merge_sweep(CacheSimResult& result, const SimulationConfig& config, SweepPart others);

// The figures over a complete record set: sampling check, recommendation, the cluster recommendation, gates
// (simulate() calls it when it ran every slot).
void finish_sweep(CacheSimResult& result, const SimulationConfig& config);

// Several processes each read the trace themselves: refuses stdin and other streams (OptionError "trace").
void check_shareable_trace(const std::string& trace);

// A record as JSON and back (the store's files, the records lite-mpi ranks send to rank 0).
SimRecord record_from_json(const nlohmann::json& j);
// A cluster record, every field, as JSON and back (what lite-mpi ranks send to rank 0; cluster_wire.cpp).
nlohmann::json cluster_record_wire(const ClusterRecord& r);
ClusterRecord cluster_record_from_wire(const nlohmann::json& j);

}  // namespace lite::cache

// lite cache-sim over MPI ranks (lite-mpi only). Every rank parses the same options, resolves the same
// configuration and computes the same cost-balanced split (lib/lite/cache/sweep.hpp), streams the trace once
// for its own slots, then the ranks agree on success before anything is printed:
//
//   every rank's view of the trace and --results-dir (mpi_host_checks.cpp) -> rank 0 names a host that differs
//   -> a prefix (LLM request) trace: its study's jobs spread over the ranks instead (mpi_prefix.cpp)
//   -> prepare and split the work by what --results-dir holds -> every rank's ok/failed flag (so no rank writes
//      a record before every rank has split) -> simulate (own slots and --nodes clusters; records written to
//      --results-dir as they finish)
//   -> quiet barrier (non-blocking, polled with sleeps, so a rank that finished early leaves its core to the
//      others instead of spinning in MPI)
//   -> every rank's ok/failed flag: on a failure the lowest failed rank prints its error line, every rank
//      exits with its code
//   -> records and clusters as JSON to rank 0 (MPI_Gatherv) -> rank 0 joins them in single-process order,
//      recommends (single caches and clusters), writes the plot -> the exit code to every rank.
//
// A rank that dies (a signal, a lost node) never reaches the barrier: mpirun ends the job and names it
// ("process rank 1 ... exited on signal 9"); with --results-dir the re-run reuses what every rank wrote.
#include "mpi_sweep.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "mpi_host_checks.hpp"
#include "mpi_prefix.hpp"
#include "mpi_ranks.hpp"
#include "error_line.hpp"
#include "lite/cache/mrc_partitions.hpp"
#include "lite/cache/record_store.hpp"
#include "lite/cache/sweep.hpp"
#include "lite/cache/verb.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"

namespace lite::cli {
namespace {

// --threads 0 (all cores) under MPI: the node's cores shared among the ranks on it.
cache::SimulationConfig per_rank_threads(cache::SimulationConfig config) {
  if (config.threads != 0) return config;
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int ranks_here = local ? std::max(1, std::atoi(local)) : 1;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  config.threads = std::max(1, cores / ranks_here);
  return config;
}

// The test hook (mpi_ranks.hpp): rank R dies right after it wrote its first record.
void install_kill_hook(cache::SweepControl& control, int rank) {
  if (killed_by_test_hook(rank)) control.on_stored = [](const cache::SimRecord&) { std::raise(SIGKILL); };
}

cache::SweepControl rank_control(const cache::SimulationConfig& config, int rank, int size, cache::RecordStore* store) {
  const std::vector<cache::SweepSlot> slots = cache::sweep_slots(config, store);  // a re-run splits what is left
  std::vector<double> setup;
  for (const auto& p : config.policies) setup.push_back(cache::policy_setup_cost(p));
  std::vector<double> preload(static_cast<size_t>(size), 0.0);
  if (config.mrc && config.mrc_partitions == 0) preload[0] = cache::curve_cost();  // rank 0 computes the curve
  if (config.mrc && config.mrc_partitions > 0)  // --mrc-partitions: round robin over the ranks
    for (int r = 0; r < size; ++r)
      preload[size_t(r)] = cache::curve_cost() *
                           double(cache::partitions_of_process(config.mrc_partitions, r, size).size()) /
                           double(config.mrc_partitions);
  const std::vector<int> owner = cache::balance_slots(slots, setup, size, preload);
  cache::SweepControl control;
  control.assigned = [owner, config, rank](size_t p, size_t k) { return owner.at(cache::slot_index(config, p, k)) == rank; };
  control.assigned_cluster = [owner, config, rank](size_t p, size_t k, size_t c) {
    return owner.at(cache::cluster_slot_index(config, p, k, c)) == rank;
  };
  control.run_curve = rank == 0;
  if (config.mrc_partitions > 0) {
    control.curve_partitions = cache::partitions_of_process(config.mrc_partitions, rank, size);
    control.run_curve = !control.curve_partitions.empty();
  }
  control.store = store;
  install_kill_hook(control, rank);
  return control;
}

// The trace facts of a scan pass (objects, working set, largest object), which only ranks that needed the pass
// (Belady's key file, sizes as fractions) computed: rank 0 takes them from whichever rank has them.
nlohmann::json scan_facts(const cache::TraceSummary& t) {
  auto opt = [](const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  return {opt(t.n_obj), opt(t.working_set_bytes), opt(t.max_object_size)};
}

void adopt_scan_facts(const nlohmann::json& facts, cache::TraceSummary& t) {
  if (t.n_obj || facts.at(0).is_null()) return;
  t.n_obj = facts.at(0).get<uint64_t>();
  t.working_set_bytes = facts.at(1).get<uint64_t>();
  t.max_object_size = facts.at(2).get<uint64_t>();
}

// Rank 0, --mrc-partitions: every rank's partition curves combined into the one curve.
void combine_curves(const cache::SimulationConfig& config, std::vector<cache::PartitionCurve> curves,
                    cache::CacheSimResult& result) {
  result.mrc = cache::combine_partitions(std::move(curves), config.mrc_partitions, config.target_hit_ratio);
}

// Rank 0: the other ranks' records joined into `result`, the plot written. Returns the exit code.
int join_on_rank0(const cache::CacheSimOptions& o, cache::SimulationConfig config, cache::CacheSimResult& result,
                  const std::vector<std::string>& texts, int size, double t_start) {
  cache::SweepPart others;
  std::vector<cache::PartitionCurve> curves = std::move(result.mrc_partition_curves);
  result.mrc_partition_curves.clear();
  for (size_t i = 1; i < texts.size(); ++i) {
    const nlohmann::json j = nlohmann::json::parse(texts[i]);
    for (const auto& r : j.at("records")) others.records.push_back(cache::record_from_json(r));
    for (const auto& c : j.at("clusters")) others.clusters.push_back(cache::cluster_record_from_wire(c));
    for (const auto& c : j.at("curves")) curves.push_back(cache::partition_curve_from_json(c));
    others.simulated += j.at("simulations").get<size_t>();
    others.reused += j.at("reused").get<size_t>();
    adopt_scan_facts(j.at("scan"), result.trace);
  }
  if (config.mrc && config.mrc_partitions > 0) combine_curves(config, std::move(curves), result);
  cache::merge_sweep(result, config, std::move(others));
  result.ranks = size;
  result.seconds = MPI_Wtime() - t_start;  // the job's, slowest rank and gather included
  result.requests_per_second = result.seconds > 0 ? double(result.trace.n_req_total) / result.seconds : 0;
  cache::finish_run(o, std::move(config), result);
  return result.gates.passed() ? int(exit_ok) : int(exit_check_failed);
}

}  // namespace

SweepOutcome mpi_cache_sim(const cache::CacheSimOptions& o, Progress& progress) {
  const double t_start = MPI_Wtime();
  const int rank = world_rank(), size = world_size();
  std::exception_ptr error;
  std::optional<cache::SimulationConfig> config;
  cache::CacheSimResult local;
  std::vector<std::string> hosts;
  if (const int code = check_inputs_on_every_host(o, rank, size, hosts)) return {std::nullopt, code};
  if (cache::is_prefix_trace(o)) return mpi_prefix_study(o, progress, std::move(hosts));
  std::unique_ptr<cache::RecordStore> store;
  cache::SweepControl control;
  try {
    cache::check_shareable_trace(o.trace);
    config = per_rank_threads(cache::prepare(o));
    store = cache::open_record_store(o, *config);
    control = rank_control(*config, rank, size, store.get());
  } catch (...) {
    error = std::current_exception();
  }
  // Every rank has split the work by what --results-dir held before any rank writes a record there: a fast
  // rank's first record must not shrink a slower rank's view of the work left (it would assign that slot again,
  // or another to nobody).
  int first_failed = first_failed_rank(bool(error), size);
  if (first_failed < size) return {std::nullopt, fail_together(error, first_failed, rank, cache::verb().name)};
  try {
    local = cache::simulate(*config, rank == 0 ? progress : no_progress(), control);
  } catch (...) {
    error = std::current_exception();
  }
  quiet_barrier();
  first_failed = first_failed_rank(bool(error), size);
  if (first_failed < size) return {std::nullopt, fail_together(error, first_failed, rank, cache::verb().name)};
  nlohmann::json clusters = nlohmann::json::array();
  if (local.cluster)
    for (const auto& c : local.cluster->records) clusters.push_back(cache::cluster_record_wire(c));
  const nlohmann::json mine = {{"records", local.records},
                               {"clusters", clusters},
                               {"simulations", local.simulations},
                               {"reused", local.reused_records},
                               {"scan", scan_facts(local.trace)},
                               {"curves", local.mrc_partition_curves}};
  const std::vector<std::string> texts = gather_text(rank == 0 ? std::string() : mine.dump(), rank, size);
  int code = 0;
  if (rank == 0) {
    try {
      local.hosts = std::move(hosts);
      code = join_on_rank0(o, *config, local, texts, size, t_start);
    } catch (...) {
      error = std::current_exception();
      code = exit_code_of(error, cache::verb().name);
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank != 0) return {std::nullopt, code};
  if (error) std::rethrow_exception(error);
  return {std::move(local), code};
}

}  // namespace lite::cli

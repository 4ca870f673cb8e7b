// lite cache-sim over MPI ranks (lite-mpi only). Every rank parses the same options, resolves the same
// configuration and computes the same cost-balanced split (lib/lite/cache/sweep.hpp), streams the trace once
// for its own slots, then the ranks agree on success before anything is printed:
//
//   every rank's view of the trace (its host has it, the same size) -> rank 0 names a host that differs
//   -> a prefix (LLM request) trace: its study's jobs spread over the ranks instead (mpi_prefix.cpp)
//   -> prepare + simulate (own slots and --nodes clusters; records written to --results-dir as they finish)
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
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
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

// What one rank sees of the trace on its host: readable or why not, and its size there.
nlohmann::json trace_seen_here(const std::string& trace, int rank) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  nlohmann::json seen = {{"host", host}, {"rank", rank}, {"problem", ""}, {"bytes", 0}};
  std::error_code ec;
  const auto status = std::filesystem::status(trace, ec);
  if (!std::filesystem::exists(status))
    seen["problem"] = "not found";
  else if (::access(trace.c_str(), R_OK) != 0)
    seen["problem"] = "not readable";
  else if (std::filesystem::is_regular_file(status))
    seen["bytes"] = std::filesystem::file_size(trace, ec);
  return seen;
}

// Rank 0: the problem with the ranks' views of the trace ("" when every host reads the same file): a trace on
// one host only, or another file under the same path, named with the hosts that differ.
std::string trace_problem(const std::vector<std::string>& texts) {
  std::map<std::string, std::vector<std::string>> missing;  // problem -> "host (rank r)"
  std::map<uint64_t, std::string> sizes;                    // bytes -> the first host that has that size
  for (const auto& text : texts) {
    const nlohmann::json seen = nlohmann::json::parse(text);
    const std::string where = fmt::format("{} (rank {})", seen.at("host").get<std::string>(), seen.at("rank").get<int>());
    if (const auto problem = seen.at("problem").get<std::string>(); !problem.empty())
      missing[problem].push_back(where);
    else
      sizes.emplace(seen.at("bytes").get<uint64_t>(), where);
  }
  if (!missing.empty()) {
    const auto& [problem, where] = *missing.begin();
    return fmt::format("{} on host {}{}, which every rank reads", problem, where.front(),
                       where.size() > 1 ? fmt::format(" and {} more", where.size() - 1) : "");
  }
  if (sizes.size() > 1)
    return fmt::format("differs between hosts: {} bytes on {}, {} bytes on {}", sizes.begin()->first,
                       sizes.begin()->second, sizes.rbegin()->first, sizes.rbegin()->second);
  return "";
}

// Rank 0: the hosts the ranks run on, in rank order, each once (the report names them).
std::vector<std::string> hosts_of(const std::vector<std::string>& texts) {
  std::vector<std::string> hosts;
  for (const auto& text : texts) {
    const auto host = nlohmann::json::parse(text).at("host").get<std::string>();
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  return hosts;
}

// Before any work: every rank reads the trace itself, so a host that lacks it (or holds another file under the
// same path) is named now, not found by that rank after the others have simulated. Returns the exit code every
// rank takes (0: go on) and, on rank 0, the hosts; rank 0 throws the error it prints.
int check_trace_on_every_host(const std::string& trace, int rank, int size, std::vector<std::string>& hosts) {
  const std::string mine = trace_seen_here(trace, rank).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::vector<std::string> texts = gather_text(mine, rank, size);
  if (rank == 0) hosts = hosts_of(texts);
  if (trace == "-") return 0;  // refused by check_shareable_trace, on every rank alike
  std::exception_ptr error;
  if (rank == 0) {
    const std::string problem = trace_problem(texts);
    if (!problem.empty())
      error = std::make_exception_ptr(InputError(trace, problem,
                                                 "put the trace at the same path on every host (a folder they share), "
                                                 "or copy the same file to each"));
  }
  int code = error ? exit_code_of(error, cache::verb().name) : 0;
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (error) {
    set_error_printing(true);
    std::rethrow_exception(error);
  }
  return code;
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
  if (const int code = check_trace_on_every_host(o.trace, rank, size, hosts)) return {std::nullopt, code};
  if (cache::is_prefix_trace(o)) return mpi_prefix_study(o, progress, std::move(hosts));
  try {
    cache::check_shareable_trace(o.trace);
    config = per_rank_threads(cache::prepare(o));
    std::unique_ptr<cache::RecordStore> store = cache::open_record_store(o, *config);
    local = cache::simulate(*config, rank == 0 ? progress : no_progress(), rank_control(*config, rank, size, store.get()));
  } catch (...) {
    error = std::current_exception();
  }
  quiet_barrier();
  const int first_failed = first_failed_rank(bool(error), size);
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

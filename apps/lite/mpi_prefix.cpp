// lite cache-sim's prefix mode over MPI ranks (lite-mpi only). Every rank reads the trace and replays every
// size-th job of the study (a policy x capacity x KV format, prefix_run.hpp StudyShare), whole, so its rows are
// those one process would have found:
//
//   replay this rank's jobs (taking those --results-dir holds, writing each replayed row there as it finishes)
//   -> every rank's ok/failed flag (a failure: the lowest failed rank prints its error line, every rank exits
//   with its code) -> the rows, and which were reused, as JSON to rank 0 (MPI_Gatherv) -> rank 0 finishes the
//   study (the one-pass curve, the recommendation, the plot) -> the exit code to every rank.
#include "mpi_prefix.hpp"

#include <mpi.h>

#include <csignal>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "mpi_ranks.hpp"
#include "lite/cache/options.hpp"
#include "lite/cache/sweep.hpp"
#include "lite/cache/verb.hpp"
#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

namespace lite::cli {
namespace {

using cache::prefix::PrefixRow;

// Thrown out of the study on a rank that found another rank failed before the rows met: nothing to print here.
struct OtherRankFailed {};

// The rows of this rank's jobs, by job index, each replayed or found in --results-dir (reused).
std::string rows_of_rank(const std::vector<PrefixRow>& rows, const std::vector<uint8_t>& reused, int rank, int size) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = size_t(rank); i < rows.size(); i += size_t(size))
    out.push_back({{"job", i}, {"row", rows[i]}, {"reused", reused[i] != 0}});
  return out.dump();
}

void adopt_rows(const std::vector<std::string>& texts, std::vector<PrefixRow>& rows, std::vector<uint8_t>& reused) {
  for (size_t r = 1; r < texts.size(); ++r)
    for (const auto& entry : nlohmann::json::parse(texts[r])) {
      const size_t job = entry.at("job").get<size_t>();
      rows.at(job) = cache::prefix::row_from_json(entry.at("row"));
      reused.at(job) = entry.at("reused").get<bool>() ? 1 : 0;
    }
}

// Rank 0's outcome: the exit code of the finished study, or of what failed while finishing it.
int rank0_code(const std::exception_ptr& error, const cache::CacheSimResult& result) {
  if (error) return exit_code_of(error, cache::verb().name);
  return result.gates.passed() ? int(exit_ok) : int(exit_check_failed);
}

}  // namespace

SweepOutcome mpi_prefix_study(const cache::CacheSimOptions& o, Progress& progress, std::vector<std::string> hosts) {
  const int rank = world_rank(), size = world_size();
  bool joined = false;
  int first_failed = size;
  cache::prefix::StudyShare share{rank, size, [&](std::vector<PrefixRow>& rows, std::vector<uint8_t>& reused) {
    joined = true;
    first_failed = first_failed_rank(false, size);
    if (first_failed < size) throw OtherRankFailed{};
    const auto texts = gather_text(rank == 0 ? std::string() : rows_of_rank(rows, reused, rank, size), rank, size);
    if (rank == 0) adopt_rows(texts, rows, reused);
    return rank == 0;
  }, nullptr};
  if (killed_by_test_hook(rank)) share.on_stored = [](const PrefixRow&) { std::raise(SIGKILL); };
  std::exception_ptr error;
  cache::CacheSimResult result;
  try {
    cache::check_shareable_trace(o.trace);
    result = cache::run_prefix_study(o, rank == 0 ? progress : no_progress(), share);
  } catch (const OtherRankFailed&) {
  } catch (...) {
    error = std::current_exception();
  }
  if (!joined) first_failed = first_failed_rank(true, size);  // failed before the rows met: say so to the others
  if (first_failed < size) return {std::nullopt, fail_together(error, first_failed, rank, cache::verb().name)};
  int code = 0;
  if (rank == 0) {
    code = rank0_code(error, result);
    if (!error) {
      result.ranks = size;
      result.hosts = std::move(hosts);
      result.prefix->notes.push_back(fmt::format("{} MPI ranks on {} host{} ({}), each replaying one job in {}", size,
                                                 result.hosts.size(), result.hosts.size() == 1 ? "" : "s",
                                                 join(result.hosts, ", "), size));
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank != 0) return {std::nullopt, code};
  if (error) std::rethrow_exception(error);
  return {std::move(result), code};
}

}  // namespace lite::cli

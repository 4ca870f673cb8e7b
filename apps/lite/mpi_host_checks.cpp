// What every rank's host holds, compared on rank 0 before any work (mpi_host_checks.hpp):
//   - the trace: every rank reads it itself, so a host that lacks it, or holds another file under the same path
//     (its size differs), is named now, not found by that rank after the others have simulated;
//   - --results-dir: a re-run splits the work left by what the folder holds, so a folder that is not one folder
//     on every host (a local disk) would give each rank another split, simulating some slots twice and others
//     never. Rank 0 writes a probe file with a fresh token there; a rank that does not read the token back is
//     on a host the folder is not shared with.
#include "mpi_host_checks.hpp"

#include <mpi.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "error_line.hpp"
#include "lite/cache/options.hpp"
#include "lite/cache/verb.hpp"
#include "lite/core/error.hpp"
#include "mpi_ranks.hpp"

namespace lite::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kTokenChars = 32;

// cache-sim's checks of the options and paths (cache::validate), which every rank runs again with the work.
bool checks_pass(const cache::CacheSimOptions& o) {
  try {
    cache::validate(o);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string this_host() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// What one rank sees of the trace on its host: readable or why not, and its size there.
nlohmann::json trace_seen_here(const std::string& trace, int rank) {
  nlohmann::json seen = {{"host", this_host()}, {"rank", rank}, {"problem", ""}, {"bytes", 0}};
  std::error_code ec;
  const auto status = fs::status(trace, ec);
  if (!fs::exists(status))
    seen["problem"] = "not found";
  else if (::access(trace.c_str(), R_OK) != 0)
    seen["problem"] = "not readable";
  else if (fs::is_regular_file(status))
    seen["bytes"] = fs::file_size(trace, ec);
  return seen;
}

// Rank 0 writes a token no earlier job wrote into the results folder; every rank gets the token. "" when there
// is nothing to compare (no folder, options or paths cache-sim refuses, or rank 0 could not write there: the
// run reports each on every rank).
struct ResultsProbe {
  fs::path file;
  std::string token;
  fs::path made;  // the outermost folder rank 0 made for the probe (empty: none), removed with it
};

// The outermost of `dir` and its ancestors that is known not to exist ("" when `dir` exists, or a stat fails
// otherwise than "not found": nothing is removed that might have been there).
fs::path first_missing(const fs::path& dir) {
  fs::path missing;
  std::error_code ec;
  for (fs::path p = fs::absolute(dir, ec); !ec && !p.empty(); p = p.parent_path()) {
    if (fs::status(p, ec).type() != fs::file_type::not_found) break;
    ec.clear();
    missing = p;
    if (p == p.parent_path()) break;
  }
  return missing;
}

// Only after cache-sim's own checks of the options and paths passed here (the folder is not an input, nor under
// one, nor a file): the probe is written where the run itself would write.
ResultsProbe write_probe_on_rank0(const cache::CacheSimOptions& o, bool probe_folder, int rank) {
  std::string token(kTokenChars, '\0');
  fs::path made;
  if (rank == 0 && probe_folder && checks_pass(o)) {
    std::mt19937_64 mix(std::random_device{}() ^
                        uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^ uint64_t(::getpid()));
    token = fmt::format("{:016x}{:016x}", mix(), mix());
    made = first_missing(o.results_dir);
    std::error_code ec;
    fs::create_directories(o.results_dir, ec);
    std::ofstream out(fs::path(o.results_dir) / (".lite-shared-" + token));
    out << token;
    if (!out.flush()) token.assign(kTokenChars, '\0');
  }
  MPI_Bcast(token.data(), kTokenChars, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (token[0] == '\0') return {{}, {}, made};
  return {fs::path(o.results_dir) / (".lite-shared-" + token), token, made};
}

bool reads_probe(const ResultsProbe& probe) {
  if (probe.token.empty()) return true;
  std::ifstream in(probe.file);
  std::string seen;
  in >> seen;
  return seen == probe.token;
}

std::string where(const nlohmann::json& seen) {
  return fmt::format("{} (rank {})", seen.at("host").get<std::string>(), seen.at("rank").get<int>());
}

// Rank 0: the problem with the ranks' views of the trace ("" when every host reads the same file).
std::string trace_problem(const std::vector<nlohmann::json>& views) {
  std::map<std::string, std::vector<std::string>> missing;  // problem -> "host (rank r)"
  std::map<uint64_t, std::string> sizes;                    // bytes -> the first host that has that size
  for (const auto& seen : views) {
    if (const auto problem = seen.at("problem").get<std::string>(); !problem.empty())
      missing[problem].push_back(where(seen));
    else
      sizes.emplace(seen.at("bytes").get<uint64_t>(), where(seen));
  }
  if (!missing.empty()) {
    const auto& [problem, hosts] = *missing.begin();
    return fmt::format("{} on host {}{}, which every rank reads", problem, hosts.front(),
                       hosts.size() > 1 ? fmt::format(" and {} more", hosts.size() - 1) : "");
  }
  if (sizes.size() > 1)
    return fmt::format("differs between hosts: {} bytes on {}, {} bytes on {}", sizes.begin()->first,
                       sizes.begin()->second, sizes.rbegin()->first, sizes.rbegin()->second);
  return "";
}

// Rank 0: the error for the first problem the views show, or null.
std::exception_ptr problem_of(const cache::CacheSimOptions& o, const std::vector<nlohmann::json>& views) {
  if (o.trace != "-") {  // a stream is refused by check_shareable_trace, on every rank alike
    if (const std::string problem = trace_problem(views); !problem.empty())
      return std::make_exception_ptr(InputError(o.trace, problem,
                                                "put the trace at the same path on every host (a folder they share), "
                                                "or copy the same file to each"));
  }
  for (const auto& seen : views)
    if (!seen.at("results_shared").get<bool>())
      return std::make_exception_ptr(InputError(
          o.results_dir,
          fmt::format("not the same folder on host {} as on rank 0's host {} (a re-run splits the work by what "
                      "the folder holds, so every rank must see every record)", where(seen), where(views.front())),
          "pass a folder every host mounts (a shared file system)"));
  return nullptr;
}

}  // namespace

int check_inputs_on_every_host(const cache::CacheSimOptions& o, int rank, int size, std::vector<std::string>& hosts) {
  const bool probe_folder = !o.results_dir.empty() && o.trace != "-";
  const ResultsProbe probe = write_probe_on_rank0(o, probe_folder, rank);
  nlohmann::json seen = trace_seen_here(o.trace, rank);
  seen["results_shared"] = reads_probe(probe);
  const std::vector<std::string> texts =
      gather_text(seen.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), rank, size);
  std::exception_ptr error;
  if (rank == 0) {
    // every rank has read the probe: it goes, with any folder made for it (the records' store makes its own)
    std::error_code ec;
    if (!probe.token.empty()) fs::remove(probe.file, ec);
    if (!probe.made.empty()) fs::remove_all(probe.made, ec);
    std::vector<nlohmann::json> views;
    for (const auto& text : texts) views.push_back(nlohmann::json::parse(text));
    for (const auto& view : views)
      if (const auto host = view.at("host").get<std::string>(); std::find(hosts.begin(), hosts.end(), host) == hosts.end())
        hosts.push_back(host);
    error = problem_of(o, views);
  }
  int code = error ? exit_code_of(error, cache::verb().name) : 0;
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (error) {
    set_error_printing(true);
    std::rethrow_exception(error);
  }
  return code;
}

}  // namespace lite::cli

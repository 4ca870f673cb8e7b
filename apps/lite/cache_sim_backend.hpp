#pragma once
// How `lite cache-sim` runs a sweep once its flags are bound: in this process (`lite`), or spread over the
// ranks of an MPI job (`lite-mpi`, which sets its own backend before parsing; see mpi_sweep.cpp). A backend
// returns the result to print, or none when another process prints it (then `exit_code` is this one's).
#include <functional>
#include <optional>

#include "lite/cache/options.hpp"
#include "lite/core/progress.hpp"

namespace lite::cli {

struct SweepOutcome {
  std::optional<cache::CacheSimResult> result;
  int exit_code = 0;
};
using CacheSimBackend = std::function<SweepOutcome(const cache::CacheSimOptions&, Progress&)>;

// Replaces the in-process backend (lite-mpi, before run_cli).
void set_cache_sim_backend(CacheSimBackend backend);

}  // namespace lite::cli

#pragma once
// lite-mpi's cache-sim backend (see mpi_sweep.cpp). Only lite-mpi links it, and with it libmpi.
#include "cache_sim_backend.hpp"

namespace lite::cli {

// Spreads the sweep over MPI_COMM_WORLD; rank 0 returns the joined result, the others their exit code.
SweepOutcome mpi_cache_sim(const cache::CacheSimOptions& options, Progress& progress);

}  // namespace lite::cli

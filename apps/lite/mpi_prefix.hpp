#pragma once
// lite-mpi's prefix studies (mpi_prefix.cpp).
#include <string>
#include <vector>

#include "cache_sim_backend.hpp"

namespace lite::cli {

// Spreads a prefix study's jobs over MPI_COMM_WORLD, once every host has been found to hold the trace (`hosts`: the
// ranks' host names); rank 0 returns the joined result, the others their exit code.
SweepOutcome mpi_prefix_study(const cache::CacheSimOptions& options, Progress& progress, std::vector<std::string> hosts);

}  // namespace lite::cli

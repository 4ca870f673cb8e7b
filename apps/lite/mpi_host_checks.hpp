#pragma once
// Before any work of an MPI cache-sim job, every rank says what its host holds (mpi_host_checks.cpp): the trace
// each rank reads itself, and the --results-dir every rank must share. Only lite-mpi links it.
#include <string>
#include <vector>

#include "lite/cache/options.hpp"

namespace lite::cli {

// Returns the exit code every rank takes (0: go on) and, on rank 0, the hosts in rank order, each once; on a
// problem, rank 0 throws the error it prints (naming the host that differs) and the others return its code.
int check_inputs_on_every_host(const cache::CacheSimOptions& o, int rank, int size, std::vector<std::string>& hosts);

}  // namespace lite::cli

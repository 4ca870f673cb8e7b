#pragma once
// The MPI exchanges lite-mpi's two cache-sim paths share (mpi_sweep.cpp: object sweeps; mpi_prefix.cpp: prefix
// studies). Only lite-mpi links them.
#include <exception>
#include <string>
#include <vector>

namespace lite::cli {

int world_rank();
int world_size();
// Waits for every rank without spinning a core (Open MPI's blocking collectives poll).
void quiet_barrier();
// Every rank's text to rank 0 (empty elsewhere).
std::vector<std::string> gather_text(const std::string& mine, int rank, int size);
// Every rank says whether it failed; returns the lowest failed rank, or size when none did.
int first_failed_rank(bool failed, int size);
// The test hook of docs/cache-sim.md (MPI): true when LITE_MPI_TEST_KILL_RANK names `rank`, which then kills
// itself with SIGKILL right after it wrote its first record to --results-dir, as a crashed node would.
bool killed_by_test_hook(int rank);
// After first_failed_rank found one: the failed rank's exit code to every rank. The failed rank rethrows `error`
// (its error line printed once, by it); the others return the code.
int fail_together(const std::exception_ptr& error, int first_failed, int rank, const char* verb);

}  // namespace lite::cli

// The MPI exchanges lite-mpi's cache-sim paths share (mpi_ranks.hpp).
#include "mpi_ranks.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "error_line.hpp"
#include "command.hpp"

namespace lite::cli {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// Waits for every rank without spinning a core (Open MPI's blocking collectives poll).
void quiet_barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  int done = 0;
  while (true) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    ::usleep(2000);
  }
}

// Every rank's text to rank 0 (empty elsewhere).
std::vector<std::string> gather_text(const std::string& mine, int rank, int size) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<size_t>(size), 0), offsets(static_cast<size_t>(size), 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank == 0) {
    for (int i = 1; i < size; ++i) offsets[size_t(i)] = offsets[size_t(i - 1)] + lengths[size_t(i - 1)];
    all.resize(size_t(offsets.back()) + size_t(lengths.back()));
  }
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0)
    for (int i = 0; i < size; ++i) out.push_back(all.substr(size_t(offsets[size_t(i)]), size_t(lengths[size_t(i)])));
  return out;
}

int first_failed_rank(bool failed, int size) {
  int mine = failed ? 1 : 0;
  std::vector<int> flags(static_cast<size_t>(size), 0);
  MPI_Allgather(&mine, 1, MPI_INT, flags.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return int(std::find(flags.begin(), flags.end(), 1) - flags.begin());
}

bool killed_by_test_hook(int rank) {
  const char* target = std::getenv("LITE_MPI_TEST_KILL_RANK");
  return target && *target && std::atoi(target) == rank;
}

int fail_together(const std::exception_ptr& error, int first_failed, int rank, const char* verb) {
  int code = rank == first_failed ? exit_code_of(error, verb) : 0;
  MPI_Bcast(&code, 1, MPI_INT, first_failed, MPI_COMM_WORLD);
  if (rank != first_failed) return code;
  set_error_printing(true);
  std::rethrow_exception(error);
}

}  // namespace lite::cli

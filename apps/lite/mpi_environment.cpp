// The parallel launcher's environment (see mpi_environment.hpp). Torch-free and MPI-free: part of `lite`.
#include "mpi_environment.hpp"

#include <cstdlib>
#include <string>

namespace lite::cli {
namespace {

int positive(const char* text) {
  if (!text || !*text) return 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return end && *end == '\0' && v > 0 && v < (1L << 30) ? int(v) : 0;
}

int non_negative(const char* text) {
  if (!text || !*text) return -1;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return end && *end == '\0' && v >= 0 && v < (1L << 30) ? int(v) : -1;
}

}  // namespace

MpiEnvironment mpi_environment(const std::function<const char*(const char*)>& getenv) {
  struct Pair {
    const char* size;
    const char* rank;
  };
  // First launcher whose size is set wins: Open MPI's own variables, then PMI, then PMIx and Slurm.
  static const Pair pairs[] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                               {"PMI_SIZE", "PMI_RANK"},
                               {"PMIX_SIZE", "PMIX_RANK"},
                               {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID"}};
  for (const auto& p : pairs) {
    const int size = positive(getenv(p.size));
    if (size == 0) continue;
    const int rank = non_negative(getenv(p.rank));
    return {size, rank < 0 ? 0 : rank};
  }
  return {};
}

MpiEnvironment mpi_environment() {
  return mpi_environment([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

}  // namespace lite::cli

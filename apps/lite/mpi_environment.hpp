#pragma once
// Whether this process is one rank of a parallel job, read from the launcher's environment alone (no MPI
// linked): `lite` checks it before running cache-sim and execs `lite-mpi` when the job has more than one
// rank, so a run without a launcher never loads libmpi and its start-up stays that of `lite`.
//
//   Open MPI mpirun / prterun   OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK
//   PMIx launchers (srun with --mpi=pmix, prterun)   PMIX_RANK, with the size from the variables around it
//   MPICH / Intel MPI (Hydra), srun --mpi=pmi2        PMI_SIZE, PMI_RANK
//   Slurm srun (any --mpi)        SLURM_STEP_NUM_TASKS, SLURM_PROCID (a job step, not the batch script)
#include <functional>

namespace lite::cli {

struct MpiEnvironment {
  int size = 1;  // ranks in the job; 1 = not launched as a parallel job
  int rank = 0;
};

// `getenv` is std::getenv, replaceable in tests.
MpiEnvironment mpi_environment(const std::function<const char*(const char*)>& getenv);
MpiEnvironment mpi_environment();

}  // namespace lite::cli

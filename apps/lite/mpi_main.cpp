// lite-mpi: `lite cache-sim` as one rank of an MPI job. `lite` execs it when it finds a parallel launcher's
// environment with more than one rank (mpi_environment.hpp); run directly it works as one rank too. It
// parses the same flags as `lite cache-sim` (the same setup), swaps in the MPI backend (mpi_sweep.cpp),
// and keeps the job to one voice: ranks other than 0 write nothing to stdout and print an error line only
// when they are the rank that failed first.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "command.hpp"
#include "command_line.hpp"
#include "error_line.hpp"
#include "mpi_sweep.hpp"
#include "lite/cache/verb.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], lite::cache::verb().name) != 0) {  // before MPI_Init: nothing else runs here
    const std::string name = argc < 2 ? "SUBCOMMAND" : argv[1];
    lite::cli::print_error_line("lite", "error", name + ": lite-mpi runs only cache-sim (lite execs it under "
                                "mpirun/srun); run 'lite " + (argc < 2 ? std::string("--help") : name) + "'");
    return lite::exit_bad_input;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);  // simulator threads never call MPI
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);   // a failed exchange ends the job
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    if (!std::freopen("/dev/null", "w", stdout)) std::fclose(stdout);  // help, --dump-config: once
    lite::cli::set_error_printing(false);
  }
  lite::install_interrupt_handler();
  lite::cli::remember_command_line(argc, argv);
  lite::cli::set_cache_sim_backend(lite::cli::mpi_cache_sim);
  const int code = lite::cli::run_cli(argc, argv);
  std::fflush(stdout);
  MPI_Finalize();
  return code;
}

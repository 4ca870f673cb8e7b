// lite: the command users type. Torch-free: it runs cache-sim, --help and --version itself and execs
// lite-torch (installed beside it, or in ../libexec/lite/) for the verbs that load TorchScript models, so a
// cache-sizing run never pays for loading libtorch. See command.hpp. Under a parallel launcher (mpirun,
// srun) with more than one rank, cache-sim is exec'd as lite-mpi, the one executable that links MPI
// (mpi_environment.hpp), so a run without a launcher never loads libmpi.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "blas_environment.hpp"
#include "command.hpp"
#include "command_line.hpp"
#include "docgen.hpp"
#include "error_line.hpp"
#include "mpi_environment.hpp"
#include "lite/cache/verb.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/options.hpp"
#include "lite/verbs/verbs.hpp"

namespace {

// A side executable (lite-torch, lite-mpi) beside this one (build tree), else in ../libexec/lite/ (installed).
std::string side_path(const char* name) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return name;
  const auto dir = self.parent_path();
  for (const auto& candidate : {dir / name, dir / ".." / "libexec" / "lite" / name})
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  return (dir / name).string();
}

// cache-sim as one rank of several: lite-mpi runs it. Without lite-mpi every rank would run the whole sweep
// and print it, so that is refused (rank 0 says why; all exit 2).
int exec_mpi_side(char** argv, const lite::cli::MpiEnvironment& mpi) {
  const std::string path = side_path("lite-mpi");
  ::execv(path.c_str(), argv);
  if (mpi.rank == 0)
    lite::cli::print_error_line(std::string("lite ") + lite::cache::verb().name, "error",
                                "mpirun/srun: " + std::to_string(mpi.size) + " ranks, but " + path + " cannot run (" +
                                    std::strerror(errno) + "); build lite with Open MPI (libopenmpi-dev) for "
                                    "lite-mpi, or run cache-sim without the launcher");
  return lite::exit_bad_input;
}

// Execs lite-torch with this argv, on OpenBLAS's OpenMP build where installed (blas_environment.hpp); returns only
// when the exec failed, with its errno.
int exec_lite_torch(char** argv) {
  lite::cli::prefer_openmp_openblas();
  ::execv(side_path("lite-torch").c_str(), argv);
  return errno;
}

// `lite --generate-docs DIR` (the build runs it): the man pages and completions of every verb, from this executable's
// flag catalog and lite-torch's (docgen.hpp).
int generate_docs(const std::string& dir) {
  nlohmann::json catalog = lite::cli::local_flag_catalog();
  const std::string torch = side_path("lite-torch");
  if (::access(torch.c_str(), X_OK) == 0) {
    std::string text;
    if (FILE* pipe = ::popen(("'" + torch + "' --flag-catalog").c_str(), "r")) {
      char buffer[4096];
      for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
      if (::pclose(pipe) != 0) text.clear();
    }
    if (text.empty()) {
      lite::cli::print_error_line("lite", "error", torch + " --flag-catalog failed; rebuild lite");
      return lite::exit_internal;
    }
    const nlohmann::json torch_catalog = nlohmann::json::parse(text);  // named: a range-for over a temporary's
    for (const auto& verb : torch_catalog["verbs"]) catalog["verbs"].push_back(verb);  // member would dangle
  }
  nlohmann::json ordered = {{"verbs", nlohmann::json::array()}};  // `lite --help`'s order
  for (const lite::VerbDescriptor* v : lite::verbs())
    for (const auto& verb : catalog["verbs"])
      if (verb["name"] == v->name) ordered["verbs"].push_back(verb);
  lite::cli::docgen::generate(dir, ordered);
  return lite::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--generate-docs") {
    try {
      return generate_docs(argv[2]);
    } catch (const lite::Error& e) {
      lite::cli::print_error_line("lite", "error", e.what());
      return lite::exit_code_for(e.kind());
    }
  }
  // --version reports libtorch's run-time facts too (quantized engines, oneDNN's ISA): lite-torch knows them.
  if (argc == 2 && std::string(argv[1]) == "--version") exec_lite_torch(argv);
  if (argc > 1) {
    const lite::VerbDescriptor* command = lite::find_verb(argv[1]);
    if (command == &lite::cache::verb()) {  // the one verb lite-mpi runs
      const lite::cli::MpiEnvironment mpi = lite::cli::mpi_environment();
      if (mpi.size > 1) return exec_mpi_side(argv, mpi);
    }
    if (command && command->needs_torch) {
      // libgomp reads OMP_NUM_THREADS as lite-torch loads, and prints its own line for a value it rejects: checked
      // here first, so lite's error is the only line (cli_main checks again for a direct lite-torch run).
      try {
        lite::option_rules::thread_environment();
      } catch (const lite::Error& e) {
        lite::cli::print_error_line(std::string("lite ") + argv[1], "error", e.what());
        return lite::exit_code_for(e.kind());
      }
      const int exec_error = exec_lite_torch(argv);
      lite::cli::print_error_line(std::string("lite ") + argv[1], "internal error",
                                  "cannot run " + side_path("lite-torch") + ": " + std::strerror(exec_error) +
                                      "; reinstall lite (the subcommands that load models live in that executable)");
      return lite::exit_internal;
    }
  }
  lite::install_interrupt_handler();
  lite::start_interrupt_watchdog();  // a signal ends even a blocked command within 1 s
  lite::cli::remember_command_line(argc, argv);
  return lite::cli::run_cli(argc, argv);
}

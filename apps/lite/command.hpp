#pragma once
// What the executables that make up the `lite` command share:
//   lite        torch-free: dispatch, --help, --version, and the verbs whose descriptor says !needs_torch
//               (cache-sim). Starts in milliseconds.
//   lite-torch  the verbs whose descriptor says needs_torch (those that load LibTorch, and run); `lite` execs it
//               for them, so users type one command and torch-free work never pays for loading libtorch
//               (~0.5 s, 150 MB).
//   lite-mpi    cache-sim as one rank of an MPI job (mpi_main.cpp).
// The subcommand table is the verb list, lite::verbs() (lib/lite/verbs/verbs.hpp, one descriptor per verb:
// name, summary, needs_torch). Each cmd_<name>.cpp binds CLI11 flags straight onto its verb's options struct
// and returns the function that runs it: validate, call the library, print the result record, return the exit
// code; it registers that setup against its verb's descriptor, so the executable that compiles it runs the verb
// (apps/CMakeLists.txt: cmd_cache_sim.cpp in lite and lite-mpi, every other cmd_*.cpp in lite-torch).
// cli_main.cpp owns dispatch and the mapping of typed errors to exit codes.
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/verb.hpp"

namespace CLI {
class App;
}

namespace lite::cli {

using Runner = std::function<int()>;
using Setup = Runner (*)(CLI::App& subcommand);

// The verbs this executable runs itself, each registered against its descriptor by the cmd_<name>.cpp compiled
// into it, with one line at namespace scope:
//   const SetupRegistration registered{quantize::verb(), setup_quantize};
// `lite VERB --help` for every verb (tests/cli/test_cli_basics.py) and scripts/check_verbs.py (ctest house/verbs)
// check that none is missing or in the wrong executable.
struct SetupEntry {
  const VerbDescriptor* verb;
  Setup setup;
};
const std::vector<SetupEntry>& local_setups();
struct SetupRegistration {
  SetupRegistration(const VerbDescriptor& verb, Setup setup);
};

// The flags of every verb this executable runs, as data (flag_catalog.hpp); `EXECUTABLE --flag-catalog` prints it.
nlohmann::json local_flag_catalog();

// Parses argv for the subcommands this executable runs and runs the chosen one; maps errors to exit codes.
int run_cli(int argc, char** argv);
// The exit code run_cli would give `error`, without printing it.
int exit_code_of(std::exception_ptr error, const std::string& command);

}  // namespace lite::cli

#pragma once
// The subcommand table, shared by the two executables that make up the `lite` command:
//   lite        torch-free: dispatch, --help, --version, cache-sim. Starts in milliseconds.
//   lite-torch  the verbs that need LibTorch (profile, quantize, prune, distill); `lite` execs it for them,
//               so users type one command and torch-free work never pays for loading libtorch (~0.5 s, 150 MB).
// Each cmd_<name>.cpp binds CLI11 flags straight onto its verb's options struct and returns the function
// that runs it: validate, call the library, print the result record, return the exit code. cli_main.cpp
// owns dispatch and the mapping of typed errors to exit codes.
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace lite::cli {

using Runner = std::function<int()>;
using Setup = Runner (*)(CLI::App& subcommand);

struct Command {
  const char* name;
  const char* summary;  // one line, shown by `lite --help`
  bool needs_torch;     // runs inside lite-torch
};

// Every subcommand, in the order `lite --help` lists them.
const std::vector<Command>& commands();
const Command* find_command(std::string_view name);

// The subcommands this executable runs itself, by name: each binary links its own list (setups_*.cpp).
struct SetupEntry {
  const char* name;
  Setup setup;
};
const std::vector<SetupEntry>& local_setups();

// Parses argv for the subcommands this executable runs and runs the chosen one; maps errors to exit codes.
int run_cli(int argc, char** argv);
// lite-mpi: ranks other than the one reporting a failure print no error line (they still exit with its code).
void set_error_printing(bool on);
// The exit code run_cli would give `error`, without printing it.
int exit_code_of(std::exception_ptr error, const std::string& command);

Runner setup_profile(CLI::App& app);
Runner setup_quantize(CLI::App& app);
Runner setup_prune(CLI::App& app);
Runner setup_distill(CLI::App& app);
Runner setup_cache_sim(CLI::App& app);
Runner setup_run(CLI::App& app);

}  // namespace lite::cli

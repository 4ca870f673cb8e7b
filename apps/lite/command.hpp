#pragma once
// The subcommand table. Each cmd_<name>.cpp adds its flags to a CLI11 subcommand, filling a plain
// options struct, and returns the function that runs it: call the library, print the result record,
// return the exit code. main.cpp owns dispatch and the mapping of typed errors to exit codes.
#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace lite::cli {

using Runner = std::function<int()>;

struct Command {
  const char* name;
  const char* summary;
  Runner (*setup)(CLI::App& subcommand);
};

const std::vector<Command>& commands();

Runner setup_profile(CLI::App& app);
Runner setup_quantize(CLI::App& app);
Runner setup_prune(CLI::App& app);
Runner setup_distill(CLI::App& app);
Runner setup_cache_sim(CLI::App& app);

}  // namespace lite::cli

// The verbs the torch-free `lite` executable (and lite-mpi) runs in its own process: every verb whose descriptor
// says !needs_torch, each with the setup of its cmd_<name>.cpp.
#include "command.hpp"
#include "lite/cache/verb.hpp"

namespace lite::cli {

Runner setup_cache_sim(CLI::App& app);  // cmd_cache_sim.cpp

const std::vector<SetupEntry>& local_setups() {
  static const std::vector<SetupEntry> table = {{&cache::verb(), setup_cache_sim}};
  return table;
}

}  // namespace lite::cli

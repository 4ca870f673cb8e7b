// The subcommands the torch-free `lite` executable runs in its own process.
#include "command.hpp"

namespace lite::cli {

const std::vector<SetupEntry>& local_setups() {
  static const std::vector<SetupEntry> table = {{"cache-sim", setup_cache_sim}};
  return table;
}

}  // namespace lite::cli

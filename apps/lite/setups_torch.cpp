// The subcommands `lite-torch` runs: every verb that loads a TorchScript model.
#include "command.hpp"

namespace lite::cli {

const std::vector<SetupEntry>& local_setups() {
  static const std::vector<SetupEntry> table = {
      {"profile", setup_profile}, {"quantize", setup_quantize}, {"prune", setup_prune}, {"distill", setup_distill},
      {"run", setup_run}};
  return table;
}

}  // namespace lite::cli

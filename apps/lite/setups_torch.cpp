// The verbs `lite-torch` runs: every verb whose descriptor says needs_torch, each with the setup of its
// cmd_<name>.cpp.
#include "command.hpp"
#include "lite/distill/verb.hpp"
#include "lite/optimize/verb.hpp"
#include "lite/profile/verb.hpp"
#include "lite/prune/verb.hpp"
#include "lite/quantize/verb.hpp"
#include "lite/recipe/verb.hpp"

namespace lite::cli {

Runner setup_profile(CLI::App& app);   // cmd_profile.cpp
Runner setup_quantize(CLI::App& app);  // cmd_quantize.cpp
Runner setup_prune(CLI::App& app);     // cmd_prune.cpp
Runner setup_distill(CLI::App& app);   // cmd_distill.cpp
Runner setup_optimize(CLI::App& app);  // cmd_optimize.cpp
Runner setup_run(CLI::App& app);       // cmd_run.cpp

const std::vector<SetupEntry>& local_setups() {
  static const std::vector<SetupEntry> table = {
      {&profile::verb(), setup_profile}, {&quantize::verb(), setup_quantize}, {&prune::verb(), setup_prune},
      {&distill::verb(), setup_distill}, {&optimize::verb(), setup_optimize}, {&recipe::verb(), setup_run},
  };
  return table;
}

}  // namespace lite::cli

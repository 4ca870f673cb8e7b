// lite prune: planned (structured and unstructured pruning over the TorchScript graph).
#include <CLI/CLI.hpp>

#include "cli_common.hpp"
#include "command.hpp"

namespace lite::cli {

Runner setup_prune(CLI::App& app) {
  app.allow_extras();
  return [] { return report_unavailable("prune", "planned: structured channel pruning and magnitude pruning"); };
}

}  // namespace lite::cli

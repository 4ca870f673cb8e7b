// lite cache-sim: placeholder until the library side lands in this branch.
#include <CLI/CLI.hpp>

#include "cli_common.hpp"
#include "command.hpp"

namespace lite::cli {

Runner setup_cache_sim(CLI::App& app) {
  app.allow_extras();
  return [] { return report_unavailable("cache-sim", "in progress"); };
}

}  // namespace lite::cli

// lite profile: placeholder until the library side lands in this branch.
#include <CLI/CLI.hpp>

#include "cli_common.hpp"
#include "command.hpp"

namespace lite::cli {

Runner setup_profile(CLI::App& app) {
  app.allow_extras();
  return [] { return report_unavailable("profile", "in progress"); };
}

}  // namespace lite::cli

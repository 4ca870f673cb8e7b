// lite distill: planned (knowledge distillation of a TorchScript teacher into a student, in C++).
#include <CLI/CLI.hpp>

#include "cli_common.hpp"
#include "command.hpp"

namespace lite::cli {

Runner setup_distill(CLI::App& app) {
  app.allow_extras();
  return [] { return report_unavailable("distill", "planned: teacher-student training with torch::optim"); };
}

}  // namespace lite::cli

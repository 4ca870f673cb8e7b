#include "torch_log_flags.hpp"

#include <CLI/CLI.hpp>

namespace lite::cli {

namespace {
TorchLogHooks& torch_log_hooks() {
  static TorchLogHooks hooks;
  return hooks;
}

bool& verbose_flag() {
  static bool given = false;
  return given;
}
}  // namespace

void set_torch_log_hooks(TorchLogHooks hooks) { torch_log_hooks() = std::move(hooks); }

bool verbose_given() { return verbose_flag(); }

void add_verbose_flag(CLI::App& app) {
  app.add_flag_callback("--verbose", [] {
        verbose_flag() = true;
        if (torch_log_hooks().print) torch_log_hooks().print();
        torch_log_hooks().collected = nullptr;
      }, "Show libtorch's log lines and warnings on stderr, not as report notes")
      ->group("Output");
}

void add_torch_warnings(report::Report& r) {
  if (!torch_log_hooks().collected) return;
  const auto warnings = torch_log_hooks().collected();
  if (warnings.empty()) return;
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < warnings.size() && i < kShown; ++i) r.notes.push_back("libtorch warned: " + warnings[i]);
  if (warnings.size() > kShown)
    r.notes.push_back("libtorch warned " + std::to_string(warnings.size() - kShown) + " more times; --verbose prints "
                      "its warnings as they happen");
  if (r.result.is_object()) r.result["libtorch_warnings"] = warnings;
}

}  // namespace lite::cli

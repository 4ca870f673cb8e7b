#pragma once
// libtorch's own log lines as the CLI shows them: collected as report notes by default, printed as they happen
// with --verbose. lite-torch's main sets the hooks; lite's torch-free half has none, so this holds no torch code.
#include <functional>
#include <string>
#include <vector>

#include "lite/core/report.hpp"

namespace CLI {
class App;
}

namespace lite::cli {

// `print` makes libtorch print as it does by default, `collected` lists its warnings so far.
struct TorchLogHooks {
  std::function<void()> print;
  std::function<std::vector<std::string>()> collected;
};
void set_torch_log_hooks(TorchLogHooks hooks);
// --verbose, for every torch verb: libtorch's warnings on stderr as they happen instead of report notes.
void add_verbose_flag(CLI::App& app);
// Whether --verbose was given: an internal error then prints libtorch's whole message, not its first line.
bool verbose_given();
// libtorch's collected warnings as the report's notes (the first five, then a count) and its JSON result's
// "libtorch_warnings"; nothing when none were collected.
void add_torch_warnings(report::Report& report);

}  // namespace lite::cli

// lite: the command users type. Torch-free: it runs cache-sim, --help and --version itself and execs
// lite-torch (installed beside it, or in ../libexec/lite/) for the verbs that load TorchScript models, so a
// cache-sizing run never pays for loading libtorch. See command.hpp.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "cli_common.hpp"
#include "command.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

namespace {

// lite-torch beside this executable (build tree), else in ../libexec/lite/ (installed tree).
std::string torch_side_path() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "lite-torch";
  const auto dir = self.parent_path();
  for (const auto& candidate : {dir / "lite-torch", dir / ".." / "libexec" / "lite" / "lite-torch"})
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  return (dir / "lite-torch").string();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    const auto* command = lite::cli::find_command(argv[1]);
    if (command && command->needs_torch) {
      const std::string path = torch_side_path();
      ::execv(path.c_str(), argv);
      std::fprintf(stderr, "lite %s: internal error: cannot run %s: %s; reinstall lite (the subcommands that load "
                   "models live in that executable)\n", argv[1], path.c_str(), std::strerror(errno));
      return lite::exit_internal;
    }
  }
  lite::install_interrupt_handler();
  lite::start_interrupt_watchdog();  // a signal ends even a blocked command within 1 s
  lite::cli::remember_command_line(argc, argv);
  return lite::cli::run_cli(argc, argv);
}

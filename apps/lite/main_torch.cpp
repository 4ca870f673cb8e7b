// lite-torch: the half of the lite command that loads LibTorch: the verbs whose descriptor says needs_torch (each
// cmd_<name>.cpp compiled into it registers its setup). `lite` execs it with its own argv, so messages, exit codes
// and signals are those of `lite`. See command.hpp.
#include <string>

#include "command.hpp"
#include "command_line.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/model/torch_log.hpp"
#include "lite/profile/diagnosis.hpp"
#include "torch_log_flags.hpp"
#include "version_info.hpp"

namespace {
std::string blas_or_none(const std::string& path) { return path.empty() ? "none mapped" : path; }
}  // namespace

int main(int argc, char** argv) {
  // libtorch's log lines become report notes; --verbose (add_verbose_flag) prints them instead.
  lite::collect_torch_warnings();
  lite::cli::set_torch_log_hooks({lite::print_torch_warnings, lite::collected_torch_warnings});
  lite::cli::set_torch_facts([] {
    lite::Environment env;
    lite::add_torch_environment(env);
    return std::vector<std::string>{"quantized engines: " + lite::join(lite::quantized_engines(), ", ") +
                                        " (default " + env.quantized_engine + ")",
                                    "oneDNN ISA: " + (env.onednn_isa.empty() ? "unknown" : env.onednn_isa) +
                                        " (ONEDNN_MAX_CPU_ISA lowers it)",
                                    "BLAS: " + blas_or_none(lite::profile::mapped_blas_library())};
  });
  lite::install_interrupt_handler();
  lite::start_interrupt_watchdog();  // a signal ends even a blocked command within 1 s
  lite::cli::remember_command_line(argc, argv);
  return lite::cli::run_cli(argc, argv);
}

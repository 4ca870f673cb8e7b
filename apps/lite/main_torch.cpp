// lite-torch: the half of the lite command that loads LibTorch (profile, quantize, prune, distill). `lite`
// execs it with its own argv, so messages, exit codes and signals are those of `lite`. See command.hpp.
#include "cli_common.hpp"
#include "command.hpp"
#include "lite/core/interrupt.hpp"

int main(int argc, char** argv) {
  lite::install_interrupt_handler();
  lite::cli::remember_command_line(argc, argv);
  return lite::cli::run_cli(argc, argv);
}

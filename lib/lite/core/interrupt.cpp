// The signal handler records which signal arrived (sig_atomic_t: the only thing a handler may safely write);
// everything else happens in the polling code and the CLI.
#include "lite/core/interrupt.hpp"

#include <csignal>

#include "lite/core/error.hpp"

namespace lite {

namespace {
volatile std::sig_atomic_t g_signal = 0;  // 0 = none, else the first SIGINT/SIGTERM received

extern "C" void on_interrupt(int signal) {
  if (g_signal) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_signal = signal;
}
}  // namespace

void install_interrupt_handler() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

bool interrupt_requested() { return g_signal != 0; }

void throw_if_interrupted() {
  if (g_signal) throw Interrupted();
}

int interrupt_exit_code() { return g_signal == SIGTERM ? 128 + SIGTERM : int(exit_interrupted); }

void request_interrupt_for_testing(bool value) { g_signal = value ? SIGINT : 0; }

}  // namespace lite

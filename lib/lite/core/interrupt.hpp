#pragma once
// Ctrl-C and SIGTERM handling: the CLI installs a handler that only records the signal; long library loops
// poll it and throw lite::Interrupted, so temporary files are cleaned up by the normal unwinding path and the
// CLI exits 128 + the signal number, as a shell reports a process killed by it: 130 for SIGINT (Ctrl-C), 143
// for SIGTERM (what `timeout`, CI runners and job schedulers send). A second signal terminates at once.

namespace lite {

void install_interrupt_handler();
bool interrupt_requested();
// Throws lite::Interrupted when an interrupt was requested.
void throw_if_interrupted();
// The exit code for the signal that interrupted the run: 143 after SIGTERM, else 130 (exit_interrupted).
int interrupt_exit_code();
// For tests: requests (SIGINT) or clears an interrupt.
void request_interrupt_for_testing(bool value);

}  // namespace lite

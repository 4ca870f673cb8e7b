#pragma once
// Ctrl-C handling: the CLI installs a handler that only sets a flag; long library loops poll it and
// throw lite::Interrupted, so temporary files are cleaned up by the normal unwinding path and the CLI
// exits 130. A second Ctrl-C terminates at once.

namespace lite {

void install_interrupt_handler();
bool interrupt_requested();
// Throws lite::Interrupted when an interrupt was requested.
void throw_if_interrupted();
// For tests.
void request_interrupt_for_testing(bool value);

}  // namespace lite

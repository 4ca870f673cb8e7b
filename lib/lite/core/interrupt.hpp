#pragma once
// Ctrl-C and SIGTERM handling: the CLI installs a handler that only records the signal; long library loops
// poll it and throw lite::Interrupted, so temporary files are cleaned up by the normal unwinding path and the
// CLI exits 128 + the signal number, as a shell reports a process killed by it: 130 for SIGINT (Ctrl-C), 143
// for SIGTERM (what `timeout`, CI runners and job schedulers send). A second signal terminates at once.
//
// A command blocked where nothing polls (opening a FIFO with no writer, a forward that never ends, a wait on
// a peer process) would ignore the signal. The watchdog ends those: a thread woken by the handler (through a
// pipe) gives the normal path a grace period, then removes the temporary files of writes in flight and ends
// the process with the signal's exit code, so a signal always ends the command within the grace period.
#include <filesystem>
#include <string>

namespace lite {

void install_interrupt_handler();
// Starts the watchdog thread (once; a later call only changes the grace period); the CLI calls it, tests of the
// polling path do not.
void start_interrupt_watchdog(double grace_s = 1.0);
// Called by the watchdog just before it ends the process (e.g. to kill worker processes); one at most, and
// it must do only what is safe while other threads may hold locks (system calls on data it already holds).
void on_forced_exit(void (*hook)());

bool interrupt_requested();
// Throws lite::Interrupted when an interrupt was requested.
void throw_if_interrupted();
// The exit code for the signal that interrupted the run: 143 after SIGTERM, else 130 (exit_interrupted).
int interrupt_exit_code();
// For tests: requests (SIGINT) or clears an interrupt.
void request_interrupt_for_testing(bool value);

// Removes the temporary files of writes in flight, runs the on_forced_exit hook, prints `line` (raw, with its
// newline) and ends the process with `exit_code` without unwinding: for the watchdog and the deadlines, whose
// work may be blocked where nothing polls. Safe while other threads hold locks.
[[noreturn]] void end_process_now(const char* line, int exit_code);

// Ends the process with `exit_code` after printing `line` (one error line) if it still runs `seconds` from now:
// a bound on commands whose work cannot be polled (a forward that never ends ignores a soft budget). Temporary
// files in flight are removed first, as on a forced exit after a signal. One deadline per process.
void arm_hard_deadline(double seconds, std::string line, int exit_code);

// A temporary file being written (write_atomically): the watchdog removes it before a forced exit. At most
// 32 are tracked at once; more are still removed by the normal unwinding path.
class TemporaryFileGuard {
 public:
  explicit TemporaryFileGuard(const std::filesystem::path& path);
  ~TemporaryFileGuard();
  TemporaryFileGuard(const TemporaryFileGuard&) = delete;
  TemporaryFileGuard& operator=(const TemporaryFileGuard&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace lite

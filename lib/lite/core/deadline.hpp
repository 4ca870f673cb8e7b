#pragma once
// A bound on one stretch of work that cannot be polled: a forward that never returns ignores every soft budget
// and every check between calls. While a StallDeadline lives, a watcher thread ends the process if the stretch
// runs past its bound (temporary files removed, one error line, the given exit code), as the signal watchdog
// does (interrupt.hpp). The library words the problem with option keys ({budget_s}); the CLI installs how a
// problem becomes its error line (its subcommand, its flag names), as it does for thrown errors.
#include <functional>
#include <string>

namespace lite {

// How a StallDeadline's problem text ("SUBJECT: PROBLEM; FIX") becomes the printed line. Without one the
// problem is printed as "lite: error: PROBLEM".
void set_deadline_wording(std::function<std::string(const std::string& problem)> wording);

class StallDeadline {
 public:
  // Armed for `seconds` from now; seconds <= 0 arms nothing. Guards do not nest: a guard made while another
  // lives replaces its bound, and the first to go disarms both.
  StallDeadline(double seconds, const std::string& problem, int exit_code);
  ~StallDeadline();
  StallDeadline(const StallDeadline&) = delete;
  StallDeadline& operator=(const StallDeadline&) = delete;

 private:
  bool armed_ = false;
};

}  // namespace lite

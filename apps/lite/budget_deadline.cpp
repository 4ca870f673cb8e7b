#include "budget_deadline.hpp"

#include <fmt/format.h>

#include "error_line.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

namespace lite::cli {

void arm_budget_deadline(const std::string& verb, double budget_s, double slack_s, const std::string& kept) {
  const double after_s = budget_s * 2 + slack_s;
  arm_hard_deadline(after_s,
                    error_line("lite " + verb, "error",
                               fmt::format("--budget: still running {:.0f} s after a budget of {:g} s (a forward that "
                                           "does not end?); {}; check the model with 'lite profile', or give a larger "
                                           "--budget", after_s, budget_s, kept)),
                    exit_bad_input);
}

}  // namespace lite::cli

#pragma once
// --budget shapes a verb's work softly (checked between steps): a forward that never returns would ignore it, so
// the process ends with exit 2 at twice the budget plus `slack_s`, its line saying what was kept (`kept`).
#include <string>

namespace lite::cli {

void arm_budget_deadline(const std::string& verb, double budget_s, double slack_s, const std::string& kept);

}  // namespace lite::cli

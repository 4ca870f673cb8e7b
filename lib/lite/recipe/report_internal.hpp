#pragma once
// How a gate's measured value and bound are worded, the same in the report's table, the markdown summary and the
// JUnit file ("1.23x", ">= 2.00x", "not measured"). Torch-free.
#include <string>

#include "lite/recipe/runner.hpp"

namespace lite::recipe::detail {

std::string measured_text(const GateResult& g);
std::string bound_text(const GateResult& g);

}  // namespace lite::recipe::detail

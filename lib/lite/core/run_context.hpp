#pragma once
// What a verb's run() is told about the run beside its options: how it was invoked, recorded in an artifact's
// provenance but never an option (no --config file or recipe step can set it). A library caller that passes none
// records none.
#include <string>

namespace lite {

struct RunContext {
  std::string command_line;  // as typed, for reproduction
};

}  // namespace lite

#pragma once
// The command line as typed, kept for what a verb records of its invocation (artifact provenance, reports).
#include <string>

#include "lite/core/run_context.hpp"

namespace lite::cli {

// Remembers argv, shell-quoted where needed, with argv[0] as "lite" (lite-torch runs under lite's name).
void remember_command_line(int argc, char** argv);
const std::string& command_line();
// What a verb's run() records of this invocation (lite/core/run_context.hpp).
RunContext run_context();

}  // namespace lite::cli

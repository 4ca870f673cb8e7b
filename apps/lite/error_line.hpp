#pragma once
// The one writer of lite's error lines: "WHERE: LABEL: TEXT" on one line of stderr ("lite quantize: error: ...",
// "lite: error: ...", "lite run: internal error: ..."), the text with its control characters escaped, so a value
// quoted into a message (an argument with a newline in it) shows as `\n` instead of cutting the line. cli_main.cpp
// words the library's typed errors and picks their exit codes; the executables' own failures before or around it
// (an exec that fails, lite-mpi run without cache-sim, a --launch-local worker that died) use the same writer.
#include <string>

namespace lite::cli {

// The line, without its newline, for a writer that cannot print it now (a deadline printed by the watchdog).
std::string error_line(const std::string& where, const std::string& label, const std::string& text);
void print_error_line(const std::string& where, const std::string& label, const std::string& text);
// A command a signal stopped: "WHERE: interrupted; OUTCOME" on a line of its own (after a progress bar).
void print_interrupted_line(const std::string& where, const std::string& outcome);
// The option warnings collected so far (an old flag or key still read: lite/core/options.hpp), each as
// "WHERE: warning: TEXT", its {key} references worded as this command's flags; then forgotten.
void print_option_warnings(const std::string& where);
// lite-mpi and data-parallel workers: only the rank that reports a failure prints it (the others still exit
// with its code).
void set_error_printing(bool on);
bool error_printing();

}  // namespace lite::cli

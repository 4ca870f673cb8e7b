#pragma once
// How a verb's result reaches the user: the output-format flags, and the report printed in the chosen format with
// the library's {key} option references worded as this command's flags.
#include <string>

#include "lite/core/report.hpp"

namespace CLI {
class App;
}

namespace lite::cli {

struct OutputOptions {
  std::string format = "text";
  bool json = false, csv = false, markdown = false;
  bool quiet = false;  // no progress bar
};

// --output-format NAME plus the shortcuts --json, --csv, --markdown, and --quiet. (Not --format: cache-sim
// uses that for the trace format.)
void add_output_flags(CLI::App& app, OutputOptions& options);
report::Format resolve_format(const OutputOptions& options);

// Prints the report to stdout in the chosen format, with the library's {key} option references worded as this
// command's flags (in tables, findings, notes and the JSON result alike), and libtorch's collected warnings as notes.
void print_report(const report::Report& report, const OutputOptions& options);

// A verb's finished run as the shared tail prints it: its report, and whether its gates passed.
struct VerbOutcome {
  report::Report report;
  bool passed = true;
};
// Prints the outcome's report (print_report) and returns the exit status: 0, or 1 when a gate failed.
int print_outcome(const VerbOutcome& outcome, const OutputOptions& options);

}  // namespace lite::cli

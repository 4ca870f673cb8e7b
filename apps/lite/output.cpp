#include "output.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "flag_catalog.hpp"
#include "flag_wording.hpp"
#include "torch_log_flags.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cli {

void add_output_flags(CLI::App& app, OutputOptions& o) {
  std::string names;
  for (const auto& p : report::printers()) names += std::string(names.empty() ? "" : ", ") + p.name;
  with_values(app.add_option("--output-format", o.format, "Output printer: " + names),
              names_of(report::printers(), [](const auto& p) { return std::string(p.name); }))
      ->group("Output");
  app.add_flag("--json", o.json, "Same as --output-format json (the complete result)")->group("Output");
  app.add_flag("--csv", o.csv, "Same as --output-format csv")->group("Output");
  app.add_flag("--markdown", o.markdown, "Same as --output-format markdown")->group("Output");
  app.add_flag("-q,--quiet", o.quiet, "No progress bar")->group("Output");
}

report::Format resolve_format(const OutputOptions& o) {
  std::vector<std::string> given;
  if (o.json) given.push_back("--json");
  if (o.csv) given.push_back("--csv");
  if (o.markdown) given.push_back("--markdown");
  if (o.format != "text") given.push_back("--output-format");  // "text" is also the default: cannot tell
  if (given.size() > 1)
    throw UsageError(join(given, ", ") + ": one output format at a time; choose one of --json, --csv, --markdown, "
                     "--output-format NAME");
  if (o.json) return report::Format::json;
  if (o.csv) return report::Format::csv;
  if (o.markdown) return report::Format::markdown;
  try {
    return report::parse_format(o.format);
  } catch (const UsageError& e) {
    throw UsageError(std::string("--output-format: ") + e.what());
  }
}

void print_report(const report::Report& r, const OutputOptions& o) {
  report::Report out = r;
  add_torch_warnings(out);
  for (auto& t : out.tables) {
    t.title = word_options(t.title);
    for (auto& row : t.rows)
      for (auto& cell : row) cell = word_options(cell);
  }
  for (auto& f : out.findings) {
    f.what = word_options(f.what);
    f.threshold = word_options(f.threshold);
    f.advice = word_options(f.advice);
  }
  for (auto& n : out.notes) n = word_options(n);
  render_option_refs_in(out.result, flag_for_key);
  report::print(out, resolve_format(o), std::cout);
  std::cout.flush();
}

int print_outcome(const VerbOutcome& outcome, const OutputOptions& o) {
  print_report(outcome.report, o);
  return outcome.passed ? int(exit_ok) : int(exit_check_failed);
}

}  // namespace lite::cli

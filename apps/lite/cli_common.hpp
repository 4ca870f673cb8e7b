#pragma once
// Pieces every subcommand shares: output-format flags, the terminal progress bar, printing a report.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"
#include "lite/core/run_context.hpp"

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

// The progress line on a terminal's stderr, redrawn in place (at most every 100 ms unless forced). Style::bar
// (every verb): "PHASE [#####.....]  50% (5/10)", or "PHASE ... 5" with no total. Style::count (distill, whose
// own training line says the rest): "PHASE", then "PHASE 5/10". A verb with more to say shows its own lines.
class TerminalProgress : public Progress {
 public:
  enum class Style { bar, count };
  explicit TerminalProgress(Style style = Style::bar) : style_(style) {}
  void begin(std::string_view phase, uint64_t total) override;
  void advance(uint64_t steps = 1) override;
  void end() override;  // clears the line
  void announce(std::string_view line) override;  // its own line, above the bar
  void show(const std::string& line, bool force);
  void clear();

 private:
  void draw(bool force);

  Style style_;
  std::string phase_;
  uint64_t total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point last_draw_;
};

// Whether the output wants a progress display at all: the text table and no --quiet.
bool progress_wanted(const OutputOptions& options);
bool stderr_is_terminal();

// A progress bar on stderr when stderr is a terminal and the output is the text table; otherwise a
// sink that prints nothing.
std::unique_ptr<Progress> make_progress(const OutputOptions& options);

// Prints the report to stdout in the chosen format, with the library's {key} option references worded as this
// command's flags (in tables, findings, notes and the JSON result alike).
void print_report(const report::Report& report, const OutputOptions& options);

// A verb's finished run as the shared tail prints it: its report, and whether its gates passed.
struct VerbOutcome {
  report::Report report;
  bool passed = true;
};
// Prints the outcome's report (print_report) and returns the exit status: 0, or 1 when a gate failed.
int print_outcome(const VerbOutcome& outcome, const OutputOptions& options);

// libtorch's own log lines (lite-torch's main sets these hooks; lite's torch-free half has none):
// `print` makes libtorch print as it does by default, `collected` lists its warnings so far.
struct TorchLogHooks {
  std::function<void()> print;
  std::function<std::vector<std::string>()> collected;
};
void set_torch_log_hooks(TorchLogHooks hooks);
// --verbose, for every torch verb: libtorch's warnings on stderr as they happen instead of report notes.
void add_verbose_flag(CLI::App& app);
// Whether --verbose was given: an internal error then prints libtorch's whole message, not its first line.
bool verbose_given();

// The command line as typed (shell-quoted where needed), recorded in artifact provenance.
// --budget shapes a verb's work softly (checked between steps): a forward that never returns would ignore it, so
// the process ends with exit 2 at twice the budget plus `slack_s`, its line saying what was kept (`kept`).
void arm_budget_deadline(const std::string& verb, double budget_s, double slack_s, const std::string& kept);

void remember_command_line(int argc, char** argv);
const std::string& command_line();
// What a verb's run() records of this invocation (lite/core/run_context.hpp).
RunContext run_context();

// The library names options by key ("calib_method"); the CLI words them as flags. The default is "--" + the
// key with '_' -> '-' ("--calib-method"); a subcommand names the exceptions when it binds them
// (name_flag("models", "MODEL"), name_flag("timing.warmup", "--warmup")). A key path with '.' or '[' and no
// flag of its own (a recipe's "steps[2].quantize.mode") is printed as it is.
void name_flag(const std::string& key, const std::string& flag);
std::string flag_for_key(const std::string& key);
// Text from the library (table descriptions for --help) with its {key} references worded as flags.
std::string word_options(const std::string& text);


}  // namespace lite::cli

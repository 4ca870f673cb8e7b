#include "cli_common.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "config_flags.hpp"
#include "lite/core/error.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/json_input.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cli {

void add_output_flags(CLI::App& app, OutputOptions& o) {
  std::string names;
  for (const auto& p : report::printers()) names += std::string(names.empty() ? "" : ", ") + p.name;
  app.add_option("--output-format", o.format, "Output printer: " + names)->group("Output");
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

void TerminalProgress::begin(std::string_view phase, uint64_t total) {
  phase_ = phase;
  total_ = total;
  done_ = 0;
  draw(true);
}

void TerminalProgress::advance(uint64_t steps) {
  done_ += steps;
  draw(false);
}

void TerminalProgress::end() {
  phase_.clear();
  clear();
}

void TerminalProgress::announce(std::string_view line) {
  clear();
  std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  if (!phase_.empty()) draw(true);
}

void TerminalProgress::show(const std::string& line, bool force) {
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

void TerminalProgress::clear() {
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

void TerminalProgress::draw(bool force) {
  const std::string done = std::to_string(done_), total = std::to_string(total_);
  if (style_ == Style::count) {
    show(done_ == 0 ? phase_ : phase_ + " " + done + (total_ ? "/" + total : ""), force);
  } else if (total_ > 0) {
    const int width = 30;
    const double frac = std::min(1.0, double(done_) / double(total_));
    const int filled = static_cast<int>(frac * width);
    char percent[8];
    std::snprintf(percent, sizeof percent, "%3.0f%%", frac * 100);
    show(phase_ + " [" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + percent + " (" + done +
             "/" + total + ")",
         force);
  } else {
    show(phase_ + " ... " + done, force);
  }
}

bool progress_wanted(const OutputOptions& o) { return !o.quiet && resolve_format(o) == report::Format::text; }

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

std::unique_ptr<Progress> make_progress(const OutputOptions& o) {
  if (stderr_is_terminal() && progress_wanted(o)) return std::make_unique<TerminalProgress>();
  return std::make_unique<NullProgress>();
}

namespace {
// The library names options as {key}; what the user reads names them as this command's flags.
std::string worded(const std::string& text) { return render_option_refs(text, flag_for_key); }

}  // namespace

std::string word_options(const std::string& text) { return worded(text); }

namespace {
TorchLogHooks& torch_log_hooks() {
  static TorchLogHooks hooks;
  return hooks;
}

// libtorch's warnings (collected instead of printed, unless --verbose) as report notes and in the JSON result.
void add_torch_warnings(report::Report& r) {
  if (!torch_log_hooks().collected) return;
  const auto warnings = torch_log_hooks().collected();
  if (warnings.empty()) return;
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < warnings.size() && i < kShown; ++i) r.notes.push_back("libtorch warned: " + warnings[i]);
  if (warnings.size() > kShown)
    r.notes.push_back("libtorch warned " + std::to_string(warnings.size() - kShown) + " more times; --verbose prints "
                      "its warnings as they happen");
  if (r.result.is_object()) r.result["libtorch_warnings"] = warnings;
}
}  // namespace

void set_torch_log_hooks(TorchLogHooks hooks) { torch_log_hooks() = std::move(hooks); }

namespace {
bool& verbose_flag() {
  static bool given = false;
  return given;
}
}  // namespace

bool verbose_given() { return verbose_flag(); }

void add_verbose_flag(CLI::App& app) {
  app.add_flag_callback("--verbose", [] {
        verbose_flag() = true;
        if (torch_log_hooks().print) torch_log_hooks().print();
        torch_log_hooks().collected = nullptr;
      }, "Show libtorch's log lines and warnings on stderr, not as report notes")
      ->group("Output");
}

void print_report(const report::Report& r, const OutputOptions& o) {
  report::Report out = r;
  add_torch_warnings(out);
  for (auto& t : out.tables) {
    t.title = worded(t.title);
    for (auto& row : t.rows)
      for (auto& cell : row) cell = worded(cell);
  }
  for (auto& f : out.findings) {
    f.what = worded(f.what);
    f.threshold = worded(f.threshold);
    f.advice = worded(f.advice);
  }
  for (auto& n : out.notes) n = worded(n);
  render_option_refs_in(out.result, flag_for_key);
  report::print(out, resolve_format(o), std::cout);
  std::cout.flush();
}

int print_outcome(const VerbOutcome& outcome, const OutputOptions& o) {
  print_report(outcome.report, o);
  return outcome.passed ? int(exit_ok) : int(exit_check_failed);
}

namespace {
std::string g_command_line;

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@%") ==
                          std::string::npos)
    return arg;
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

void arm_budget_deadline(const std::string& verb, double budget_s, double slack_s, const std::string& kept) {
  const double after_s = budget_s * 2 + slack_s;
  arm_hard_deadline(after_s,
                    fmt::format("lite {}: error: --budget: still running {:.0f} s after a budget of {:g} s (a forward "
                                "that does not end?); {}; check the model with 'lite profile', or give a larger "
                                "--budget", verb, after_s, budget_s, kept),
                    exit_bad_input);
}

void remember_command_line(int argc, char** argv) {
  g_command_line.clear();
  for (int i = 0; i < argc; ++i) g_command_line += (i ? " " : "") + shell_quote(i == 0 ? "lite" : argv[i]);
}

const std::string& command_line() { return g_command_line; }

RunContext run_context() { return RunContext{g_command_line}; }

namespace {
std::map<std::string, std::string>& flag_names() {
  static std::map<std::string, std::string> names;
  return names;
}
}  // namespace

void name_flag(const std::string& key, const std::string& flag) { flag_names()[key] = flag; }

std::string flag_for_key(const std::string& key) {
  if (auto it = flag_names().find(key); it != flag_names().end()) return it->second;
  if (key.empty() || key.find_first_of(".[") != std::string::npos) return key;
  std::string flag = "--" + key;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

void add_config_flags(CLI::App& app, ConfigFlags& flags) {
  app.add_option("--config", flags.config,
                 "Options from a JSON file, as --dump-config prints them; flags win")
      ->group("Options as data");
  app.add_flag("--dump-config", flags.dump, "Print the effective options as JSON and exit")->group("Options as data");
}

void add_shared_flags(CLI::App& app, OutputOptions& output, ConfigFlags& config, bool verbose) {
  add_output_flags(app, output);
  if (verbose) add_verbose_flag(app);
  add_config_flags(app, config);
}

nlohmann::json read_config_file(const std::string& path) {
  const std::string form_fix = "see --dump-config for the form";
  nlohmann::json j = read_json_input_file(path, "config file", form_fix);
  if (!j.is_object()) throw InputError(path, "is not a JSON object of options", form_fix);
  return j;
}

namespace {
// Every string in `value` (paths sit at the top level or in lists), with the key it sits under.
void each_string(const std::string& key, const nlohmann::json& value,
                 const std::function<void(const std::string&, const std::string&)>& visit) {
  if (value.is_string()) visit(key, value.get<std::string>());
  if (value.is_array())
    for (const auto& v : value) each_string(key, v, visit);
}
}  // namespace

void check_config_not_named(const std::string& config, const nlohmann::json& options) {
  for (auto it = options.begin(); it != options.end(); ++it)
    each_string(it.key(), it.value(), [&](const std::string& key, const std::string& path) {
      if (!path.empty() && path != "-" && same_file(path, config))
        throw OptionError(key, path + ": is the {config} file, an input of this command",
                          "choose a different path (lite never overwrites its inputs)");
    });
}

bool given_on_command_line(const CLI::App& app, const std::string& key) {
  for (const std::string& name : {flag_for_key(key), key}) {
    const CLI::Option* option = app.get_option_no_throw(name);
    if (option) return option->count() > 0;
  }
  return false;
}


}  // namespace lite::cli

// Dispatch shared by `lite` and `lite-torch`: builds the CLI11 app from the verb list (only the chosen
// subcommand gets its flags, so `lite --help` lists one line per subcommand and starts fast), parses, runs,
// and maps the library's typed errors to exit codes (README "Exit codes"): the one place that words an error the
// library threw and picks the exit status. Every error line is written by error_line.hpp.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <regex>
#include <string>

#include "command.hpp"
#include "error_line.hpp"
#include "flag_catalog.hpp"
#include "flag_wording.hpp"
#include "help_format.hpp"
#include "number_flags.hpp"
#include "torch_log_flags.hpp"
#include "version_info.hpp"
#include "lite/core/deadline.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"
#include "lite/verbs/verbs.hpp"

namespace lite::cli {

namespace {

Setup local_setup(const VerbDescriptor& verb) {
  for (const auto& s : local_setups())
    if (s.verb == &verb) return s.setup;
  return nullptr;
}

// The error line for an exception escaping a subcommand; returns the exit code.
int report_error(const std::string& name) {
  const std::string where = "lite " + name;
  try {
    throw;
  } catch (const OptionError& e) {
    const std::string line = describe_problem(flag_for_key(e.key()), e.problem(), e.fix());
    print_error_line(where, "error", render_option_refs(line, flag_for_key));
    return exit_bad_input;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::interrupted) {
      const auto* interrupted = dynamic_cast<const Interrupted*>(&e);
      const std::string outcome = interrupted ? interrupted->outcome() : "nothing was written";
      print_interrupted_line("lite " + name, outcome);
      return interrupt_exit_code();  // 130 after Ctrl-C, 143 after SIGTERM
    } else if (e.kind() == ErrorKind::internal) {
      const std::string what = render_option_refs(e.what(), flag_for_key);
      print_error_line(where, "internal error", verbose_given() ? what : first_line(what));
    } else {
      print_error_line(where, "error", render_option_refs(e.what(), flag_for_key));
    }
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    // One line by default; libtorch's messages run to a stack of frames, which --verbose prints.
    print_error_line(where, "internal error",
                     (verbose_given() ? std::string(e.what()) : first_line(e.what())) +
                         " (please report this with the command line" + (verbose_given() ? ")" : " and --verbose)"));
    return exit_internal;
  }
}

// The flag of `command` that an unknown `flag` most likely meant: one whose name starts the other's
// (--calibration for --calib, --thread for --threads), else the closest by edit distance; "" when none is close.
std::string flag_meant(const CLI::App* command, const std::string& flag) {
  if (command == nullptr || flag.rfind("--", 0) != 0) return {};
  std::vector<std::string> flags;
  for (const CLI::Option* option : command->get_options())
    for (const auto& name : option->get_lnames()) flags.push_back("--" + name);
  std::vector<std::string> prefixed;  // the nearest of these wins: --input-files means --input-file, not --input
  for (const auto& known : flags)
    if (known.size() > 3 && flag.size() > 3 && (flag.rfind(known, 0) == 0 || known.rfind(flag, 0) == 0))
      prefixed.push_back(known);
  if (!prefixed.empty())
    return *std::min_element(prefixed.begin(), prefixed.end(), [&](const std::string& a, const std::string& b) {
      return edit_distance(flag, a) < edit_distance(flag, b);
    });
  return closest_match(flag, flags).value_or("");
}

// CLI11's parse errors worded in the house form "FLAG: PROBLEM" (the caller adds the fix). CLI11 gives only
// its message text, so the known shapes are matched here; anything else keeps CLI11's words under "arguments".
std::string word_parse_error(const CLI::ParseError& e, const std::string& command, const CLI::App* sub) {
  const std::string text = e.what();
  std::smatch m;
  auto match = [&](const char* pattern) { return std::regex_match(text, m, std::regex(pattern)); };
  if (match("The following arguments? (?:was|were) not expected: (.*)")) {
    // CLI11 lists them last first; the one the user typed first is what to fix.
    std::vector<std::string> extras = split(m[1].str(), ' ');
    const std::string first = extras.empty() ? std::string() : extras.back();
    const std::string others = extras.size() > 1 ? " (also " + std::to_string(extras.size() - 1) + " more)" : "";
    if (!first.empty() && first[0] == '-') {
      const std::string meant = flag_meant(sub, first);
      return first + ": not a flag of '" + command + "'" + (meant.empty() ? "" : " (did you mean " + meant + "?)") + others;
    }
    return first + ": one argument too many" + others;
  }
  if (match("Could not convert: (\\S+) = ([\\s\\S]*)"))
    return m[1].str() + ": '" + m[2].str() + "' is not a value of this flag's type";
  if (match("The value ([\\s\\S]*) is not an allowed value for (\\S+)"))
    return m[2].str() + ": '" + m[1].str() + "' is not an allowed value";
  if (match("A subcommand is required")) return "SUBCOMMAND: no subcommand given";
  if (match("(\\S+) is required")) return m[1].str() + ": missing";
  if (match("(\\S+) excludes (\\S+)")) return m[1].str() + ": cannot be combined with " + m[2].str();
  if (match("(\\S+) requires (\\S+)")) return m[1].str() + ": needs " + m[2].str();
  if (match("Expected (exactly|at least) (\\d+) arguments to (\\S+), got (\\d+)"))
    return m[3].str() + ": expected " + m[1].str() + " " + m[2].str() + " values, got " + m[4].str();
  if (match("(--?[A-Za-z0-9][\\w-]*|[A-Z][A-Z_]*): ([\\s\\S]+)")) return m[1].str() + ": " + m[2].str();
  return "arguments: " + text;
}

// The first option of the chosen subcommand given an empty value ("-o ''"), or "". An empty string is each verb's
// "unset" (a default path, no file), so it would silently fall back to the default.
std::string first_empty_value(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    for (const CLI::Option* option : sub->get_options())
      for (const auto& value : option->results())
        if (value.empty()) return option->get_name();
  return {};
}

}  // namespace

namespace {
std::vector<SetupEntry>& setup_registry() {
  static std::vector<SetupEntry> entries;
  return entries;
}
}  // namespace

const std::vector<SetupEntry>& local_setups() { return setup_registry(); }

SetupRegistration::SetupRegistration(const VerbDescriptor& verb, Setup setup) {
  setup_registry().push_back({&verb, setup});
}

int exit_code_of(std::exception_ptr error, const std::string& command) {
  const bool saved = error_printing();
  set_error_printing(false);
  int code = exit_internal;
  try {
    std::rethrow_exception(error);
  } catch (...) {
    code = report_error(command);
  }
  set_error_printing(saved);
  return code;
}

nlohmann::json local_flag_catalog() {
  CLI::App app{"lite"};
  app.name("lite");
  configure_help(app);
  for (const VerbDescriptor* v : verbs())
    if (Setup setup = local_setup(*v)) setup(*app.add_subcommand(v->name, v->summary));
  return flag_catalog(app);
}

int run_cli(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--flag-catalog") {  // for `lite --generate-docs` (docgen.hpp)
    std::printf("%s\n", local_flag_catalog().dump(2).c_str());
    return exit_ok;
  }
  // Broken pipe (README "Exit codes"): a reader that stops early (`lite ... --json | head -c 10`) ends the
  // output, not the command. Without this, the first write after it closed kills lite with SIGPIPE (exit 141);
  // ignored, the write fails with EPIPE, which std::cout and stdio keep to themselves, and lite ends as the
  // run ended (0 when it succeeded), with nothing on stderr.
  std::signal(SIGPIPE, SIG_IGN);

  // An unknown first word gets a "did you mean" instead of CLI11's generic complaint.
  std::vector<std::string> names;
  for (const VerbDescriptor* v : verbs()) names.push_back(v->name);
  const std::string chosen_word = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  if (!chosen_word.empty() && !find_verb(chosen_word)) {
    print_error_line("lite", "error",
                     chosen_word + ": " + unknown_name_message("subcommand", chosen_word, names) + "; run 'lite --help'");
    return exit_bad_input;
  }

  CLI::App app{"lite: make a model lighter (prune, quantize, distill) and size the cache in front of it.\n"
               "Exit codes: 0 ok, 1 a gate or check failed, 2 usage error or bad input, 3 internal error, "
               "130 interrupted (Ctrl-C), 143 terminated (SIGTERM). Run 'lite SUBCOMMAND --help' for its flags."};
  app.name("lite");
  configure_help(app);  // before the subcommands, which copy it: wrapped help, defaults from the options structs
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  app.fallthrough(false);

  Runner runner;
  for (const VerbDescriptor* v : verbs()) {
    CLI::App* sub = app.add_subcommand(v->name, v->summary);
    if (v->name != chosen_word) continue;
    Setup setup = local_setup(*v);
    if (!setup) {
      print_error_line("lite", "error", std::string(v->name) + ": this executable does not run it; run 'lite " + v->name + "'");
      return exit_bad_input;
    }
    runner = setup(*sub);
    set_deadline_wording([where = "lite " + std::string(v->name)](const std::string& problem) {
      return error_line(where, "error", render_option_refs(problem, flag_for_key));
    });
    decimal_numbers_only(*sub);  // "0x10", "010", "1e3" for a count: refused, not read as CLI11 would
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where = app.get_subcommands().empty() ? "lite" : "lite " + app.get_subcommands()[0]->get_name();
    print_error_line(where, "error", word_parse_error(e, where, app.get_subcommands().empty() ? nullptr : app.get_subcommands()[0]) + "; run '" + where + " --help'");
    return exit_bad_input;
  }
  if (const std::string empty = first_empty_value(app); !empty.empty()) {
    const std::string where = "lite " + chosen_word;
    print_error_line(where, "error", empty + ": empty value (an unset variable in a script?); give a value or drop the flag");
    return exit_bad_input;
  }

  try {
    // libtorch's thread pools read them at their first parallel region; the torch-free verbs ignore them.
    if (const VerbDescriptor* v = find_verb(chosen_word); v && v->needs_torch) option_rules::thread_environment();
    return runner();
  } catch (...) {
    return report_error(chosen_word);
  }
}

}  // namespace lite::cli

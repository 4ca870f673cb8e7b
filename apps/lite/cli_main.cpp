// Dispatch shared by `lite` and `lite-torch`: builds the CLI11 app from the subcommand table (only the chosen
// subcommand gets its flags, so `lite --help` lists one line per subcommand and starts fast), parses, runs,
// and maps the library's typed errors to exit codes (README "Exit codes"). The only place that prints an
// error line or picks an exit status.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "cli_common.hpp"
#include "command.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"
#include "lite/core/version.hpp"

namespace lite::cli {

namespace {

std::string version_text() {
  return std::string("lite ") + lite::version() + " (commit " + lite::git_commit() + ", " + lite::build_type() +
         " build, " + lite::compiler() + ")\nlibtorch " + LITE_LIBTORCH_VERSION + "\n";
}

Setup local_setup(const std::string& name) {
  for (const auto& s : local_setups())
    if (name == s.name) return s.setup;
  return nullptr;
}

// The error line for an exception escaping a subcommand; returns the exit code.
int report_error(const std::string& name) {
  try {
    throw;
  } catch (const OptionError& e) {
    const std::string line = describe_problem(flag_for_key(e.key()), e.problem(), e.fix());
    std::fprintf(stderr, "lite %s: error: %s\n", name.c_str(), first_line(render_option_refs(line, flag_for_key)).c_str());
    return exit_bad_input;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::interrupted) {
      std::fprintf(stderr, "\nlite %s: interrupted; nothing was written\n", name.c_str());
      return interrupt_exit_code();  // 130 after Ctrl-C, 143 after SIGTERM
    } else {
      const char* label = e.kind() == ErrorKind::internal ? "internal error" : "error";
      std::fprintf(stderr, "lite %s: %s: %s\n", name.c_str(), label,
                   first_line(render_option_refs(e.what(), flag_for_key)).c_str());
    }
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lite %s: internal error: %s (please report this with the command line)\n", name.c_str(),
                 first_line(e.what()).c_str());
    return exit_internal;
  }
}

}  // namespace

int run_cli(int argc, char** argv) {
  // An unknown first word gets a "did you mean" instead of CLI11's generic complaint.
  std::vector<std::string> names;
  for (const auto& c : commands()) names.push_back(c.name);
  const std::string chosen_word = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  if (!chosen_word.empty() && !find_command(chosen_word)) {
    std::fprintf(stderr, "lite: error: %s: %s; run 'lite --help'\n", chosen_word.c_str(),
                 unknown_name_message("subcommand", chosen_word, names).c_str());
    return exit_bad_input;
  }

  CLI::App app{"lite: make a model lighter (prune, quantize, distill) and size the cache in front of it.\n"
               "Exit codes: 0 ok, 1 a gate or check failed, 2 usage error or bad input, 3 internal error, "
               "130 interrupted (Ctrl-C), 143 terminated (SIGTERM). Run 'lite SUBCOMMAND --help' for its flags."};
  app.name("lite");
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  app.fallthrough(false);

  Runner runner;
  for (const auto& c : commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    if (c.name != chosen_word) continue;
    Setup setup = local_setup(c.name);
    if (!setup) {
      std::fprintf(stderr, "lite: error: %s: this executable does not run it; run 'lite %s'\n", c.name, c.name);
      return exit_bad_input;
    }
    runner = setup(*sub);
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
    std::fprintf(stderr, "%s: error: %s; run '%s --help'\n", where.c_str(), first_line(e.what()).c_str(),
                 where.c_str());
    return exit_bad_input;
  }

  try {
    return runner();
  } catch (...) {
    return report_error(chosen_word);
  }
}

}  // namespace lite::cli

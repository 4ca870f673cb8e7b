// lite: the command-line front end. Owns the subcommand table, dispatch, and the mapping from the
// library's typed errors to exit codes (README "Exit codes"). Everything else lives in lib/.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>

#include "cli_common.hpp"
#include "command.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"
#include "lite/core/version.hpp"
#include "lite/model/torch_environment.hpp"

namespace lite::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"profile", "Measure latency, throughput, memory and per-op cost of a TorchScript model; compare two",
       setup_profile},
      {"quantize", "Quantize a TorchScript model (int8 static/dynamic, fp16, bf16, weight-only) and prove the gain",
       setup_quantize},
      {"prune", "Prune channels or weights of a TorchScript model", setup_prune},
      {"distill", "Distill a TorchScript teacher into a smaller student", setup_distill},
      {"cache-sim", "Replay a request trace through cache policies and sizes; recommend a size", setup_cache_sim},
  };
  return table;
}

}  // namespace lite::cli

namespace {

std::string version_text() {
  return std::string("lite ") + lite::version() + " (commit " + lite::git_commit() + ", " + lite::build_type() +
         " build, " + lite::compiler() + ")\nlibtorch " + lite::libtorch_version() + "\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lite;
  install_interrupt_handler();
  cli::remember_command_line(argc, argv);

  // An unknown first word gets a "did you mean" instead of CLI11's generic complaint.
  std::vector<std::string> names;
  for (const auto& c : cli::commands()) names.push_back(c.name);
  if (argc > 1 && argv[1][0] != '-') {
    std::string word = argv[1];
    bool known = false;
    for (const auto& n : names) known = known || n == word;
    if (!known) {
      std::fprintf(stderr, "lite: error: %s: %s; run 'lite --help'\n", word.c_str(),
                   unknown_name_message("subcommand", word, names).c_str());
      return exit_bad_input;
    }
  }

  CLI::App app{"lite: make a model lighter (prune, quantize, distill) and size the cache in front of it.\n"
               "Exit codes: 0 ok, 1 a gate or check failed, 2 usage error or bad input, 3 internal error, "
               "130 interrupted (Ctrl-C), 143 terminated (SIGTERM)."};
  app.name("lite");
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  app.fallthrough(false);

  std::map<CLI::App*, cli::Runner> runners;
  for (const auto& c : cli::commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    runners[sub] = c.setup(*sub);
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

  CLI::App* chosen = app.get_subcommands().front();
  const std::string name = chosen->get_name();
  try {
    return runners.at(chosen)();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::interrupted) {
      std::fprintf(stderr, "\nlite %s: interrupted; nothing was written\n", name.c_str());
      return interrupt_exit_code();  // 130 after Ctrl-C, 143 after SIGTERM
    } else {
      const char* label = e.kind() == ErrorKind::internal ? "internal error" : "error";
      std::fprintf(stderr, "lite %s: %s: %s\n", name.c_str(), label, first_line(e.what()).c_str());
    }
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lite %s: internal error: %s (please report this with the command line)\n", name.c_str(),
                 first_line(e.what()).c_str());
    return exit_internal;
  }
}

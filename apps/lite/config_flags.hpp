#pragma once
// --config FILE and --dump-config, for every subcommand (options as data: the same JSON a recipe step holds).
// A config file sets options by key; a flag given on the command line overrides the file's value for its
// key; --dump-config prints the effective options and exits, so a command line and a recipe step
// round-trip. Generic over the verb's options struct through its to_json/from_json. Also the tail every verb's
// runner shares (run_verb), which starts with them.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "error_line.hpp"
#include "output.hpp"
#include "terminal_progress.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"

namespace lite::cli {

struct ConfigFlags {
  std::string config;
  bool dump = false;
};

void add_config_flags(CLI::App& app, ConfigFlags& flags);

// The flags every verb ends its list with, in this order: the output flags (add_output_flags), --verbose for a verb
// that runs libtorch (add_verbose_flag), --config and --dump-config.
void add_shared_flags(CLI::App& app, OutputOptions& output, ConfigFlags& config, bool verbose);

// Reads FILE as a JSON object through read_json_input_file (a regular file of at most 16 MiB, nested at most 256
// deep, no key twice); InputError naming the file when it cannot.
nlohmann::json read_config_file(const std::string& path);

// Whether the flag that words option `key` was given on the command line.
bool given_on_command_line(const CLI::App& app, const std::string& key);

// The --config file is an input like any other (core/file_roles.hpp): no option may name it, since every path
// option names a file the command reads (which a config file is not) or writes (which would overwrite it).
// Throws OptionError under the first key that does.
void check_config_not_named(const std::string& config, const nlohmann::json& options);

// Folds the config file under the command line into `options`. Returns true when --dump-config printed the
// effective options and the command should stop.
template <class Options>
bool resolve_config(const CLI::App& app, const ConfigFlags& flags, Options& options) {
  if (!flags.config.empty()) {
    const nlohmann::json file = read_config_file(flags.config);
    Options merged;
    try {
      from_json(file, merged);
    } catch (const OptionError& e) {
      throw e.prefixed(flags.config + ": ");
    }
    nlohmann::json effective = merged;
    const nlohmann::json command_line = options;
    for (auto it = command_line.begin(); it != command_line.end(); ++it)
      if (given_on_command_line(app, it.key())) effective[it.key()] = it.value();
    Options resolved;
    from_json(effective, resolved);
    options = std::move(resolved);
    check_config_not_named(flags.config, nlohmann::json(options));
  }
  print_option_warnings("lite " + app.get_name());
  if (flags.dump) {
    std::cout << nlohmann::json(options).dump(2) << std::endl;
    return true;
  }
  return false;
}

// The tail of a verb's runner, once its own flags are folded into `options`: the --config file under the flags
// (stop after --dump-config), `validate(options)`, then `run(options, progress)` with the
// progress display the output wants, its VerbOutcome printed, exit 0, or 1 when a gate failed.
template <class Options, class Validate, class Run>
int run_verb(const CLI::App& app, const ConfigFlags& flags, const OutputOptions& output, Options& options,
             Validate&& validate, Run&& run) {
  if (resolve_config(app, flags, options)) return int(exit_ok);
  validate(options);
  auto progress = make_progress(output);
  VerbOutcome outcome = run(options, *progress);
  print_option_warnings("lite " + app.get_name());  // from a recipe's steps
  return print_outcome(outcome, output);
}

}  // namespace lite::cli

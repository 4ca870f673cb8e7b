// lite run RECIPE.json: reads and checks the recipe (every problem, with its key path, before any work), runs it
// through lite::recipe, writes the markdown summary when asked, prints the report, and exits 1 when a gate failed.
// Recipe errors are worded "RECIPE: KEY PATH: problem; fix" so a CI log names the file and the key to change.
#include <CLI/CLI.hpp>
#include <memory>

#include "command.hpp"
#include "command_line.hpp"
#include "config_flags.hpp"
#include "flag_wording.hpp"
#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"
#include "lite/recipe/runner.hpp"
#include "lite/recipe/verb.hpp"
#include "lite/verbs/verbs.hpp"

namespace lite::cli {

namespace {

struct RunState {
  recipe::RunOptions options;
  OutputOptions output;
  ConfigFlags config;
};

// Reads and checks the recipe; an error in the recipe names the file before the key path.
recipe::Recipe read_and_check(const RunState& s) {
  try {
    recipe::Recipe r = recipe::read_recipe(s.options.recipe);
    recipe::check(r, s.options);
    return r;
  } catch (const OptionError& e) {
    if (e.key() == "output" || e.key() == "work_dir" || e.key() == "report_md" || e.key() == "junit")
      throw;  // a flag of lite run
    throw InputError(describe_problem(s.options.recipe.string() + ": " + e.key(), e.problem(), e.fix()));
  }
}

}  // namespace

Runner setup_run(CLI::App& app) {
  auto s = std::make_shared<RunState>();
  name_flag("recipe", "RECIPE");
  name_flag("output", "-o");
  name_flag("threads", "the recipe's evaluate.threads");  // the shared load finding's advice
  app.description(
      "Run a recipe: its steps (" + join(recipe::step_verb_names(), ", ") +
      ") in order, each step's artifact feeding the next, then its gates measured on the final artifact against the "
      "original. Exit 1 when a gate fails (the artifact is still written), 2 for an invalid recipe (nothing is run). "
      "Details: docs/run.md.");
  app.add_option("recipe", s->options.recipe, "Recipe JSON file; its relative paths resolve against its folder");
  app.add_option("-o,--output", s->options.output,
                 "Final artifact (default: MODEL.<recipe name>.pt beside the recipe's model)");
  app.add_option("--work-dir", s->options.work_dir,
                 "Folder for intermediate artifacts and step reports, kept afterwards (default: OUTPUT.work beside "
                 "it)");
  app.add_option("--report-md", s->options.report_md,
                 "Also write a markdown summary to FILE (append it to $GITHUB_STEP_SUMMARY for a CI job summary)");
  app.add_option("--junit", s->options.junit,
                 "Also write the gates as JUnit XML to FILE, one test case per gate (CI test reporters)");
  app.add_flag("--allow-noisy", s->options.allow_noisy,
               "Accept speed gates timed on an oversubscribed machine or showing an implausible speedup");
  add_shared_flags(app, s->output, s->config, /*verbose=*/false);

  return [s, &app] {
    resolve_format(s->output);
    if (resolve_config(app, s->config, s->options)) return int(exit_ok);
    recipe::validate(s->options);
    const recipe::Recipe r = read_and_check(*s);
    auto progress = make_progress(s->output);
    const recipe::RunResult result = recipe::run(r, s->options, *progress, run_context());
    if (!s->options.report_md.empty()) write_file_atomically(s->options.report_md, recipe::to_markdown(result));
    if (!s->options.junit.empty()) write_file_atomically(s->options.junit, recipe::to_junit(result));
    return print_outcome({recipe::to_report(result), result.gates.passed()}, s->output);
  };
}

const SetupRegistration registered{recipe::verb(), setup_run};

}  // namespace lite::cli

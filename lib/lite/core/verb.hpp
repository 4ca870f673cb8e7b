#pragma once
// The descriptor of a verb (a `lite` subcommand): what the CLI table, the recipe schema and the step dispatch all
// read, so a verb's name is written once. Each verb exports its own, header-only and torch-free, as
// lite::<area>::verb() in lib/lite/<area>/verb.hpp (cache/ holds cache-sim's, recipe/ run's, every other area
// that is a verb its own); lib/lite/verbs/verbs.cpp lists them in `lite --help` order. Header-only because the
// torch-free `lite` reads every descriptor without linking the torch-side libraries that hold the verbs.
//
// The parts that need a verb's code are registered against the descriptor (never its name as a string), one
// table per place that runs verbs: each executable's CLI setups (each apps/lite/cmd_<name>.cpp registers its own in
// the executable that compiles it) and lite run's step runners (lib/lite/recipe/runner_steps.cpp). tests/unit/recipe/test_verbs.cpp and
// test_step_runners.cpp, tests/cli/test_cli_basics.py and scripts/check_verbs.py (ctest house/verbs) hold them
// together.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite {

// A verb as a step of a recipe (lite run): which of its option keys name files, which is its model input.
struct RecipeStepShape {
  // The model input, defaulting to the latest artifact ("" for none); a list (profile's "models") when
  // model_key_is_list.
  std::string model_key;
  bool model_key_is_list = false;
  std::vector<std::string> path_keys;       // string values that name input files (resolved against the recipe)
  std::vector<std::string> path_list_keys;  // arrays of such strings
  std::vector<std::string> owned_keys;      // set by lite run (outputs go to its work folder); a recipe may not
  // Values a step's options get when the recipe leaves the key out, before paths are resolved.
  std::vector<std::pair<std::string, std::string>> defaults;
  // Whether a step with these options writes a model artifact.
  bool (*makes_model)(const nlohmann::json& options) = nullptr;
};

struct VerbDescriptor {
  const char* name = "";     // the subcommand: `lite NAME`, a recipe's {"NAME": {...}} step, a report's "command"
  const char* summary = "";  // one line, shown by `lite --help`
  bool needs_torch = false;  // runs inside lite-torch (the torch-free `lite` execs it)
  std::optional<RecipeStepShape> recipe_step;  // unset: a recipe cannot hold it as a step (run itself)
};

// Whether `options` sets the boolean `key` to true (the makes_model rules read dry_run, sensitivity).
inline bool option_flag_set(const nlohmann::json& options, const char* key) {
  auto it = options.find(key);
  return it != options.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace lite

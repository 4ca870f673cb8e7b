// Fuzz target: lite run's recipe reader, torch-free: the recipe's JSON text through lite::parse_json_input (the
// reader of every untrusted JSON document: recipes and --config files), then lite::recipe::parse_recipe.
// Invariants: both reject input only with OptionError/InputError (never a crash, whatever the nesting); the JSON
// reader accepts no text nlohmann's own parser rejects, and builds the same document it does; an accepted recipe
// has at least one step, every step a known verb with an object of options, and every "@steps[I]" reference in a
// file-naming key points to an earlier step (that writes a model, unless it reads the step's report).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "lite/core/json_input.hpp"
#include "lite/profile/verb.hpp"
#include "lite/recipe/recipe.hpp"
#include "lite/verbs/verbs.hpp"

namespace {

void check_reference(const nlohmann::json& value, const lite::recipe::Recipe& r, size_t reader) {
  if (!value.is_string()) return;
  if (auto ref = lite::recipe::parse_step_reference(value.get<std::string>())) {
    fuzz::require(size_t(ref->step) < reader, "a reference points to an earlier step");
    fuzz::require(ref->report || r.steps[size_t(ref->step)].makes_model, "a model reference reads a model");
  }
}

// The keys that name files (other keys are left to the verb's from_json, which rejects unknown ones).
void check_references(const nlohmann::json& options, const lite::RecipeStepShape& verb,
                      const lite::recipe::Recipe& r, size_t reader) {
  for (const auto& key : verb.path_keys)
    if (options.contains(key)) check_reference(options[key], r, reader);
  for (const auto& key : verb.path_list_keys)
    if (options.contains(key) && options[key].is_array())
      for (const auto& v : options[key]) check_reference(v, r, reader);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json plain = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  fuzz::expect_clean([&] {
    const nlohmann::json document = lite::parse_json_input(text, "/fuzz/recipe.json", "fix the JSON");
    fuzz::require(!plain.is_discarded(), "the JSON reader accepts only what nlohmann's parser accepts");
    fuzz::require(document == plain, "the JSON reader builds the document nlohmann's parser builds");
    const lite::recipe::Recipe r = lite::recipe::parse_recipe(document, "/fuzz/recipe.json");
    fuzz::require(!r.steps.empty(), "a recipe has steps");
    for (const auto& step : r.steps) {
      const auto* verb = lite::recipe::find_step_verb(step.verb);
      fuzz::require(verb != nullptr, "every step is a known verb");
      fuzz::require(step.options.is_object(), "every step's options are an object");
      check_references(step.options, *verb->recipe_step, r, size_t(step.index));
    }
    check_references(r.evaluate, *lite::profile::verb().recipe_step, r, r.steps.size());
    (void)r.input_files();
  });
  return 0;
}

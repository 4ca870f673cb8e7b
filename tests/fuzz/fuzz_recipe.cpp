// Fuzz target: the recipe parser of lite run (lite::recipe::parse_recipe), torch-free. Input: the recipe's JSON
// text (invalid JSON is skipped: read_recipe reports it before the parser runs).
// Invariants: the parser rejects input only with OptionError/InputError; an accepted recipe has at least one step,
// every step a known verb with an object of options, and every "@steps[I]" reference in a file-naming key points to
// an earlier step (that writes a model, unless it reads the step's report).
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "lite/recipe/recipe.hpp"
#include "lite/recipe/verbs.hpp"

namespace {

void check_reference(const nlohmann::json& value, const lite::recipe::Recipe& r, size_t reader) {
  if (!value.is_string()) return;
  if (auto ref = lite::recipe::parse_step_reference(value.get<std::string>())) {
    fuzz::require(size_t(ref->step) < reader, "a reference points to an earlier step");
    fuzz::require(ref->report || r.steps[size_t(ref->step)].makes_model, "a model reference reads a model");
  }
}

// The keys that name files (other keys are left to the verb's from_json, which rejects unknown ones).
void check_references(const nlohmann::json& options, const lite::recipe::VerbInfo& verb,
                      const lite::recipe::Recipe& r, size_t reader) {
  for (const auto& key : verb.path_keys)
    if (options.contains(key)) check_reference(options[key], r, reader);
  for (const auto& key : verb.path_list_keys)
    if (options.contains(key) && options[key].is_array())
      for (const auto& v : options[key]) check_reference(v, r, reader);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return 0;
  fuzz::expect_clean([&] {
    const lite::recipe::Recipe r = lite::recipe::parse_recipe(document, "/fuzz/recipe.json");
    fuzz::require(!r.steps.empty(), "a recipe has steps");
    for (const auto& step : r.steps) {
      const auto* verb = lite::recipe::find_verb(step.verb);
      fuzz::require(verb != nullptr, "every step is a known verb");
      fuzz::require(step.options.is_object(), "every step's options are an object");
      check_references(step.options, *verb, r, size_t(step.index));
    }
    check_references(r.evaluate, *lite::recipe::find_verb("profile"), r, r.steps.size());
    (void)r.input_files();
  });
  return 0;
}

// The one list of verbs (lib/lite/verbs/verbs.cpp) over each verb's descriptor (lib/lite/<area>/verb.hpp): every
// entry is complete, names are unique, and a step verb's keys describe options the recipe parser can resolve.
// That each verb has its CLI setup and step runner is checked where those live: tests/cli/test_cli_basics.py
// (`lite VERB --help` for every verb) and tests/unit/recipe/test_step_runners.cpp (torch side).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "lite/verbs/verbs.hpp"

namespace {

bool contains(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

}  // namespace

TEST_CASE("every verb has a unique name and a one-line summary, and find_verb finds it") {
  std::set<std::string> names;
  for (const lite::VerbDescriptor* v : lite::verbs()) {
    const std::string name = v->name;
    CAPTURE(name);
    CHECK(names.insert(name).second);
    CHECK_FALSE(name.empty());
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") == std::string::npos);
    const std::string summary = v->summary;
    CHECK_FALSE(summary.empty());
    CHECK(summary.find('\n') == std::string::npos);
    CHECK(lite::find_verb(name) == v);
  }
  CHECK(lite::find_verb("quantise") == nullptr);
  CHECK(lite::find_verb("") == nullptr);
}

TEST_CASE("the step verbs are the verbs with a recipe step, in the list's order, and run is not one") {
  std::vector<std::string> expected;
  for (const lite::VerbDescriptor* v : lite::verbs())
    if (v->recipe_step) expected.push_back(v->name);
  CHECK(lite::recipe::step_verb_names() == expected);
  CHECK(lite::recipe::step_verbs().size() == expected.size());
  const lite::VerbDescriptor* run = lite::find_verb("run");
  REQUIRE(run != nullptr);
  CHECK_FALSE(run->recipe_step.has_value());
  CHECK(lite::recipe::find_step_verb("run") == nullptr);
  for (const auto& name : expected) CHECK(lite::recipe::find_step_verb(name) == lite::find_verb(name));
}

TEST_CASE("a step verb's keys: a makes_model rule, the model input among its path keys, owned keys not paths") {
  for (const lite::VerbDescriptor* v : lite::recipe::step_verbs()) {
    CAPTURE(std::string(v->name));
    const lite::RecipeStepShape& step = *v->recipe_step;
    CHECK(bool(step.makes_model));
    if (!step.model_key.empty())
      CHECK(contains(step.model_key_is_list ? step.path_list_keys : step.path_keys, step.model_key));
    else
      CHECK_FALSE(step.model_key_is_list);
    for (const auto& key : step.owned_keys) {
      CHECK_FALSE(contains(step.path_keys, key));
      CHECK_FALSE(contains(step.path_list_keys, key));
    }
    for (const auto& [key, value] : step.defaults) CHECK_FALSE(contains(step.owned_keys, key));
  }
}

TEST_CASE("makes_model: quantize and prune write none on a dry run, prune none for a sensitivity scan") {
  const auto makes = [](const char* verb, const char* options) {
    return lite::find_verb(verb)->recipe_step->makes_model(nlohmann::json::parse(options));
  };
  CHECK(makes("quantize", "{}"));
  CHECK_FALSE(makes("quantize", R"({"dry_run": true})"));
  CHECK(makes("prune", R"({"dry_run": false})"));
  CHECK_FALSE(makes("prune", R"({"sensitivity": true})"));
  CHECK(makes("distill", R"({"dry_run": true})"));
  CHECK_FALSE(makes("profile", "{}"));
  CHECK_FALSE(makes("cache-sim", "{}"));
}

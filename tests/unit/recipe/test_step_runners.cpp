// lite run's step dispatch (lib/lite/recipe/runner_steps.cpp) against the verb list: every verb a recipe may hold
// has a step runner, so a verb added to the list with a recipe_step but no runner fails here, not in a user's run.
#include <doctest/doctest.h>

#include "lite/core/error.hpp"
#include "lite/recipe/runner_internal.hpp"
#include "lite/verbs/verbs.hpp"

TEST_CASE("every step verb has a step runner, and a verb that is no step (run) has none") {
  for (const lite::VerbDescriptor* v : lite::verbs()) {
    CAPTURE(std::string(v->name));
    if (v->recipe_step)
      CHECK(bool(lite::recipe::detail::step_runner(v->name)));
    else
      CHECK_THROWS_AS(lite::recipe::detail::step_runner(v->name), lite::InternalError);
  }
}

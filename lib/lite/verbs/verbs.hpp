#pragma once
// Every verb of lite, the one list: the CLI's subcommand table (`lite --help`, dispatch between `lite` and
// lite-torch), the steps a recipe may hold and lite run's step dispatch are all read from it. Each entry is the
// verb's own descriptor (lite/core/verb.hpp, defined in lib/lite/<area>/verb.hpp). Torch-free (target lite::verbs),
// so the torch-free `lite` and the recipe parser use it without LibTorch. Adding a verb is one line in verbs.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "lite/core/verb.hpp"

namespace lite {

// Every verb, in the order `lite --help` lists them.
const std::vector<const VerbDescriptor*>& verbs();
// nullptr for an unknown name.
const VerbDescriptor* find_verb(std::string_view name);

}  // namespace lite

namespace lite::recipe {

// The verbs a recipe step may name (those with a recipe_step: every verb but run), in the same order.
std::vector<const VerbDescriptor*> step_verbs();
// nullptr for a name that is not a step verb.
const VerbDescriptor* find_step_verb(std::string_view name);
std::vector<std::string> step_verb_names();

}  // namespace lite::recipe

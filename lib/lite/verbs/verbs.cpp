// The list of every verb (see verbs.hpp). A verb added to lite is one line here; its descriptor lives in its own
// folder, its CLI setup in apps/lite/cmd_<verb>.cpp (which registers itself) and, when a recipe may hold it, its step runner in
// runner_steps.cpp (docs/architecture.md, "Adding a verb").
#include "lite/verbs/verbs.hpp"

#include "lite/cache/verb.hpp"
#include "lite/distill/verb.hpp"
#include "lite/optimize/verb.hpp"
#include "lite/profile/verb.hpp"
#include "lite/prune/verb.hpp"
#include "lite/quantize/verb.hpp"
#include "lite/recipe/verb.hpp"

namespace lite {

const std::vector<const VerbDescriptor*>& verbs() {
  static const std::vector<const VerbDescriptor*> list = {
      &profile::verb(), &quantize::verb(), &prune::verb(), &distill::verb(), &optimize::verb(), &cache::verb(),
      &recipe::verb(),
  };
  return list;
}

const VerbDescriptor* find_verb(std::string_view name) {
  for (const VerbDescriptor* v : verbs())
    if (name == v->name) return v;
  return nullptr;
}

}  // namespace lite

namespace lite::recipe {

std::vector<const VerbDescriptor*> step_verbs() {
  std::vector<const VerbDescriptor*> steps;
  for (const VerbDescriptor* v : verbs())
    if (v->recipe_step) steps.push_back(v);
  return steps;
}

const VerbDescriptor* find_step_verb(std::string_view name) {
  const VerbDescriptor* v = find_verb(name);
  return v && v->recipe_step ? v : nullptr;
}

std::vector<std::string> step_verb_names() {
  std::vector<std::string> names;
  for (const VerbDescriptor* v : step_verbs()) names.push_back(v->name);
  return names;
}

}  // namespace lite::recipe

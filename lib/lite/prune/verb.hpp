#pragma once
// lite prune's descriptor (lite/core/verb.hpp): its name, its line in `lite --help`, its side of the command and its
// shape as a recipe step. Header-only and torch-free, so the torch-free `lite` lists it without linking lite::prune.
#include "lite/core/verb.hpp"

namespace lite::prune {

inline const VerbDescriptor& verb() {
  static const VerbDescriptor descriptor = [] {
    VerbDescriptor v;
    v.name = "prune";
    v.summary = "Prune channels or weights of a TorchScript model";
    v.needs_torch = true;
    RecipeStepShape& step = v.recipe_step.emplace();
    step.model_key = "model";
    step.path_keys = {"model", "data", "eval", "labels"};
    step.owned_keys = {"output"};
    step.makes_model = [](const nlohmann::json& o) {
      return !option_flag_set(o, "dry_run") && !option_flag_set(o, "sensitivity");
    };
    return v;
  }();
  return descriptor;
}

}  // namespace lite::prune

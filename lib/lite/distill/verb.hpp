#pragma once
// lite distill's descriptor (lite/core/verb.hpp): its name, its line in `lite --help`, its side of the command and its
// shape as a recipe step. Header-only and torch-free, so the torch-free `lite` lists it without linking lite::distill.
#include "lite/core/verb.hpp"

namespace lite::distill {

inline const VerbDescriptor& verb() {
  static const VerbDescriptor descriptor = [] {
    VerbDescriptor v;
    v.name = "distill";
    v.summary = "Distill a TorchScript teacher into a smaller student";
    v.needs_torch = true;
    RecipeStepShape& step = v.recipe_step.emplace();
    // The student defaults to the latest artifact (e.g. the pruned model) and the teacher to the recipe's model.
    step.model_key = "student";
    // "labels": data_labels's old key, read until the next release (options.cpp).
    step.path_keys = {"teacher", "student", "data", "data_labels", "labels", "eval", "eval_labels"};
    step.owned_keys = {"output", "checkpoint_dir", "resume"};
    step.defaults = {{"teacher", "@model"}};
    step.makes_model = [](const nlohmann::json&) { return true; };
    return v;
  }();
  return descriptor;
}

}  // namespace lite::distill

#pragma once
// lite profile's descriptor (lite/core/verb.hpp): its name, its line in `lite --help`, its side of the command and its
// shape as a recipe step. Header-only and torch-free, so the torch-free `lite` lists it without linking lite::profile.
#include "lite/core/verb.hpp"

namespace lite::profile {

inline const VerbDescriptor& verb() {
  static const VerbDescriptor descriptor = [] {
    VerbDescriptor v;
    v.name = "profile";
    v.summary = "Measure latency, throughput, memory and per-op cost of a TorchScript model; compare two";
    v.needs_torch = true;
    RecipeStepShape& step = v.recipe_step.emplace();
    step.model_key = "models";
    step.model_key_is_list = true;
    step.path_keys = {"eval", "labels"};
    step.path_list_keys = {"models", "input_files"};
    step.owned_keys = {"chrome_trace", "trace"};  // "trace": its old name
    step.makes_model = [](const nlohmann::json&) { return false; };
    return v;
  }();
  return descriptor;
}

}  // namespace lite::profile

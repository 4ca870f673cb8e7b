#pragma once
// lite quantize's descriptor (lite/core/verb.hpp): its name, its line in `lite --help`, its side of the command and its
// shape as a recipe step. Header-only and torch-free, so the torch-free `lite` lists it without linking lite::quantize.
#include "lite/core/verb.hpp"

namespace lite::quantize {

inline const VerbDescriptor& verb() {
  static const VerbDescriptor descriptor = [] {
    VerbDescriptor v;
    v.name = "quantize";
    v.summary = "Quantize a TorchScript model (int8, fp16, bf16, weight-only) and prove the gain";
    v.needs_torch = true;
    RecipeStepShape& step = v.recipe_step.emplace();
    step.model_key = "model";
    step.path_keys = {"model", "calib", "calib_stats", "eval", "labels"};
    step.owned_keys = {"output"};
    step.makes_model = [](const nlohmann::json& o) { return !option_flag_set(o, "dry_run"); };
    return v;
  }();
  return descriptor;
}

}  // namespace lite::quantize

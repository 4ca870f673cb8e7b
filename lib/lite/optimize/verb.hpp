#pragma once
// lite optimize's descriptor (lite/core/verb.hpp). Header-only and torch-free.
#include "lite/core/verb.hpp"

namespace lite::optimize {

inline const VerbDescriptor& verb() {
  static const VerbDescriptor descriptor = [] {
    VerbDescriptor v;
    v.name = "optimize";
    v.summary = "Search prune ratios x quantization modes (x a cache) for the cheapest variant meeting a latency target";
    v.needs_torch = true;
    RecipeStepShape& step = v.recipe_step.emplace();
    step.model_key = "model";
    step.path_keys = {"model", "eval", "labels", "calib", "trace"};
    step.owned_keys = {"output", "work_dir", "emit_recipe", "plot"};  // lite run keeps its outputs in its work folder
    step.makes_model = [](const nlohmann::json&) { return true; };
    return v;
  }();
  return descriptor;
}

}  // namespace lite::optimize

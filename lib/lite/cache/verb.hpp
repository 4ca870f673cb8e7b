#pragma once
// lite cache-sim's descriptor (lite/core/verb.hpp): its name, its line in `lite --help`, its side of the command
// and its shape as a recipe step. Header-only and torch-free like every verb's (the list needs no verb's library).
#include "lite/core/verb.hpp"

namespace lite::cache {

inline const VerbDescriptor& verb() {
  static const VerbDescriptor descriptor = [] {
    VerbDescriptor v;
    v.name = "cache-sim";
    v.summary = "Replay a request trace through cache policies and sizes; recommend a size";
    v.needs_torch = false;  // the torch-free `lite` runs it itself (lite-mpi under an MPI launcher)
    RecipeStepShape& step = v.recipe_step.emplace();
    step.path_keys = {"trace", "temp_dir", "results_dir"};
    step.path_list_keys = {"miss_latency_from"};
    step.owned_keys = {"plot"};
    step.makes_model = [](const nlohmann::json&) { return false; };
    return v;
  }();
  return descriptor;
}

}  // namespace lite::cache

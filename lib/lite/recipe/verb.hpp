#pragma once
// lite run's descriptor (lite/core/verb.hpp): its name, its line in `lite --help` and its side of the command; a
// recipe cannot hold run as a step. Header-only and torch-free, so the torch-free `lite` lists it without linking
// lite::recipe. (verbs.hpp beside it is the list of every verb.)
#include "lite/core/verb.hpp"

namespace lite::recipe {

inline const VerbDescriptor& verb() {
  static const VerbDescriptor descriptor = [] {
    VerbDescriptor v;
    v.name = "run";
    v.summary = "Run a recipe (steps in order, then CI gates); exit 1 when a gate fails";
    v.needs_torch = true;  // no recipe_step: a recipe does not hold another recipe
    return v;
  }();
  return descriptor;
}

}  // namespace lite::recipe

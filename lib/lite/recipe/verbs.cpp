// The verb table of recipe steps (see verbs.hpp). A verb added to lite run is one row here plus one row in
// runner_steps.cpp.
#include "lite/recipe/verbs.hpp"

namespace lite::recipe {

namespace {

bool flag_set(const nlohmann::json& options, const char* key) {
  auto it = options.find(key);
  return it != options.end() && it->is_boolean() && it->get<bool>();
}

bool quantize_makes_model(const nlohmann::json& o) { return !flag_set(o, "dry_run"); }
bool prune_makes_model(const nlohmann::json& o) { return !flag_set(o, "dry_run") && !flag_set(o, "sensitivity"); }
bool always(const nlohmann::json&) { return true; }
bool never(const nlohmann::json&) { return false; }

}  // namespace

const std::vector<VerbInfo>& verbs() {
  static const std::vector<VerbInfo> table = {
      {"profile", "models", true, {"eval", "labels"}, {"models", "input_files"}, {"trace"}, never},
      {"quantize", "model", false, {"model", "calib", "calib_stats", "eval", "labels"}, {}, {"output"},
       quantize_makes_model},
      {"prune", "model", false, {"model", "data", "eval", "labels"}, {}, {"output"}, prune_makes_model},
      // The student defaults to the latest artifact (e.g. the pruned model) and the teacher to the recipe's model.
      {"distill", "student", false, {"teacher", "student", "data", "labels", "eval", "eval_labels"}, {},
       {"output", "checkpoint_dir", "resume"}, always},
      {"cache-sim", "", false, {"trace", "temp_dir", "results_dir"}, {"miss_latency_from"}, {"plot"}, never},
  };
  return table;
}

const VerbInfo* find_verb(const std::string& name) {
  for (const auto& v : verbs())
    if (name == v.name) return &v;
  return nullptr;
}

std::vector<std::string> verb_names() {
  std::vector<std::string> names;
  for (const auto& v : verbs()) names.push_back(v.name);
  return names;
}

}  // namespace lite::recipe

#pragma once
// The steps a recipe may hold, one row per verb: which of its option keys name input files (resolved against
// the recipe's folder, or references to earlier steps), which key is its model input (defaulting to the latest
// artifact), and which keys lite run sets itself (outputs go to the work folder). Torch-free, so the recipe's
// structure is checked without LibTorch. The runner's table (runner_steps.cpp) adds how each verb runs.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite::recipe {

struct VerbInfo {
  const char* name;
  const char* model_key;                  // the model input ("" for none); a list for profile's "models"
  bool model_key_is_list;
  std::vector<std::string> path_keys;     // string values that name input files
  std::vector<std::string> path_list_keys;  // arrays of such strings
  std::vector<std::string> owned_keys;    // set by lite run; a recipe may not set them
  // Whether a step with these options writes a model artifact.
  bool (*makes_model)(const nlohmann::json& options);
};

const std::vector<VerbInfo>& verbs();
// nullptr for an unknown verb.
const VerbInfo* find_verb(const std::string& name);
std::vector<std::string> verb_names();

}  // namespace lite::recipe

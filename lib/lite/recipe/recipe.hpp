#pragma once
// A recipe: the input model, named data files, ordered steps (each one verb with that verb's option keys) and
// the gates a CI job checks afterwards. This header and recipe.cpp/verbs.cpp are torch-free, so the structure
// of a recipe is checked (and fuzzed) without LibTorch; each step's option values are then read by the verb's
// own from_json/validate in runner.cpp, with errors under the step's key path ("steps[2].quantize.mode").
//
//   {
//     "lite_recipe": 1,
//     "name": "emergency-int8",
//     "model": "../data/fmnist_cnn.pt",
//     "data": {"eval": "../data/fmnist_eval.pt"},
//     "steps": [{"quantize": {"mode": "static", "calib": "@data.eval"}}],
//     "evaluate": {"duration_s": 1},
//     "gates": {"min_speedup": 1.2, "max_accuracy_drop": 1.0}
//   }
//
// Path values resolve against the recipe's folder. A path value may instead be a reference: "@model" (the
// recipe's model), "@data.NAME", "@steps[I]" (the model artifact step I wrote) or "@steps[I].report" (step I's
// JSON report, e.g. a profile report for cache-sim's miss_latency_from); a step may read only what an earlier
// step made. A step's model input defaults to the latest artifact (the recipe's model before any).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite::recipe {

inline constexpr int kSchemaVersion = 1;

struct Step {
  int index = 0;
  std::string verb;          // a step verb's name (verbs.hpp, step_verb_names())
  nlohmann::json options;    // the verb's keys: paths absolute, "@model"/"@data.*" resolved, "@steps[I]..." kept
  bool makes_model = false;  // writes a model artifact later steps (and the final output) read
  std::string key_path() const { return "steps[" + std::to_string(index) + "]." + verb; }
};

// Bounds checked after the steps; unset ones are not checked.
struct GateBounds {
  std::optional<double> max_accuracy_drop;  // points of top-1 accuracy, final artifact vs the original
  std::optional<double> min_agreement;      // percent of top-1 agreement with the original
  std::optional<double> min_speedup;        // median(original frozen) / median(final)
  std::optional<double> max_p99_ms;         // the final artifact's p99 forward latency
  std::optional<uint64_t> max_size_bytes;   // the final artifact's file size ("max_size": 2000000 or "2MiB")
  std::optional<double> min_hit_ratio;      // the last cache-sim step, best policy at its largest size
  std::optional<double> max_cache_p99_ms;   // the same step's p99 request latency, best policy/variant
  bool any_model_gate() const {
    return max_accuracy_drop || min_agreement || min_speedup || max_p99_ms || max_size_bytes;
  }
  bool any_cache_gate() const { return min_hit_ratio || max_cache_p99_ms; }
};

struct Recipe {
  int schema_version = kSchemaVersion;
  std::string name;  // default: the file's stem
  std::string description;
  std::filesystem::path file, folder;
  std::filesystem::path model;
  std::map<std::string, std::filesystem::path> data;
  std::vector<Step> steps;
  nlohmann::json evaluate = nlohmann::json::object();  // lite profile's keys, without "models"
  GateBounds gates;
  nlohmann::json document;  // the recipe as written

  // The step whose artifact is the final one (-1 when no step writes a model).
  int last_model_step() const;
  // Every file the recipe reads (the model, data files, resolved step paths): outputs may be none of them.
  std::vector<std::filesystem::path> input_files() const;
};

// "@steps[3]" -> {3, false}; "@steps[3].report" -> {3, true}; anything else -> nullopt.
struct StepReference {
  int step = 0;
  bool report = false;
};
std::optional<StepReference> parse_step_reference(const std::string& text);
std::string step_reference(int step, bool report = false);

// Checks the structure and resolves paths and references; throws OptionError naming the key path (with
// "did you mean" and the valid keys) for the first problem. `recipe_file` names the folder paths resolve in.
Recipe parse_recipe(const nlohmann::json& document, const std::filesystem::path& recipe_file);
// Reads and parses FILE through read_json_input_file (lite/core/json_input.hpp); InputError when it cannot be
// read, is not a regular file of at most 16 MiB, is not JSON, nests deeper than 256 or repeats a key.
Recipe read_recipe(const std::filesystem::path& recipe_file);

// The key paths of gates, in the order they are checked and printed.
std::vector<std::string> gate_keys();

}  // namespace lite::recipe

#pragma once
// lite run's options (the options pattern of lite/core/options.hpp): the recipe and where the run writes. Keys are
// the field names; the CLI binds its flags straight onto these fields, and --config / --dump-config read and write
// them. Torch-free.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace lite::recipe {

struct RunOptions {
  std::filesystem::path recipe;    // the recipe JSON file; its relative paths resolve against its folder
  std::filesystem::path output;    // final artifact; empty: MODEL.<recipe name>.pt beside the model
  std::filesystem::path work_dir;  // intermediate artifacts and reports; empty: OUTPUT without .pt + ".work"
  std::filesystem::path report_md; // markdown summary (checked as an output, written by the caller)
  std::filesystem::path junit;     // the gates as JUnit XML for CI test reporters (as report_md)
  // Accept speed gates (min_speedup, max_p99_ms, a quantize step's speed gate) timed on an oversubscribed machine
  // or showing an implausible speedup; without it they fail (lite/measure/machine_load.hpp, speed_claim.hpp).
  bool allow_noisy = false;
};

void to_json(nlohmann::json& j, const RunOptions& o);
void from_json(const nlohmann::json& j, RunOptions& o);
// Value rules before any work: OptionError naming the key. The output paths are checked against the recipe's own
// files by check() (runner.hpp), which reads the recipe.
void validate(const RunOptions& o);

}  // namespace lite::recipe

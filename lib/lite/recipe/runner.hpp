#pragma once
// lite run: a recipe's steps in order, each verb's artifact feeding the next, then its gates measured on the
// final artifact against the original model, then the final artifact written with the recipe and the gate
// results in its provenance. Torch-free interface: the CLI calls check() (every problem before any work),
// run(), and prints to_report(result).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/environment.hpp"
#include "lite/core/gates.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"
#include "lite/core/run_context.hpp"
#include "lite/recipe/recipe.hpp"
#include "lite/recipe/run_options.hpp"

namespace lite::recipe {

struct StepRecord {
  int index = 0;
  std::string verb, key_path;
  nlohmann::json options;  // as run (references replaced by files)
  nlohmann::json report;   // the verb's own JSON report (what `lite VERB --json` prints)
  Gates gates;             // the verb's own gates (e.g. quantize's tolerance)
  std::string artifact;    // model written ("" for none)
  std::string report_file; // the report, in the work folder
  double seconds = 0;
};

struct GateResult {
  std::string name;        // "min_speedup", or "steps[1].quantize: tolerance" for a step's own gate
  std::string comparison;  // ">=" or "<=" ("" for a step's own gate)
  double bound = 0;
  std::optional<double> value;  // unset: could not be measured (the gate fails)
  std::string unit;        // "points", "%", "x", "ms", "bytes", ""
  std::string detail;      // what was measured on what
  bool passed = false;
};

void to_json(nlohmann::json& j, const GateResult& g);
void to_json(nlohmann::json& j, const StepRecord& s);

struct RunResult {
  Recipe recipe;
  std::filesystem::path output, work_dir;
  std::vector<StepRecord> steps;
  nlohmann::json evaluation;  // lite profile's JSON report of original (frozen) vs final; null when none
  std::vector<GateResult> gates_checked;
  Gates gates;                // names of the failed gates
  bool wrote_artifact = false;
  Environment environment;
  std::vector<report::Finding> findings;  // e.g. the evaluation ran on an oversubscribed machine
  std::vector<std::string> notes;
  double wall_s = 0;
};

// The resolved output and work folder paths.
std::filesystem::path output_path(const Recipe& recipe, const RunOptions& options);
std::filesystem::path work_dir_path(const Recipe& recipe, const RunOptions& options);

// Every check that can be made before work starts: input files exist, each step's options read and validate
// (OptionError under the step's key path), outputs are not inputs. Throws; writes nothing.
void check(const Recipe& recipe, const RunOptions& options);

// Runs the steps and the gates; writes intermediates to the work folder and the final artifact atomically.
// Interrupted (Ctrl-C) leaves no final artifact.
RunResult run(const Recipe& recipe, const RunOptions& options, Progress& progress = no_progress(),
              const RunContext& context = {});

report::Report to_report(const RunResult& result);
// A markdown summary for a CI job summary or a pull-request comment.
std::string to_markdown(const RunResult& result);
// The gates as a JUnit XML file for CI test reporters (junit.cpp).
std::string to_junit(const RunResult& result);

}  // namespace lite::recipe

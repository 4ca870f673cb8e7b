#pragma once
// The one artifact writer. Every subcommand that writes a model goes through save_artifact: the file is
// written atomically (temporary file + rename, never over the input) and carries its provenance as the
// extra file lite.json inside the archive, readable from Python with
//   extra = {"lite.json": ""}; torch.jit.load(path, _extra_files=extra)
#include <torch/script.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/model/input_spec.hpp"
#include "lite/model/load.hpp"

namespace lite::model {

struct ArtifactInfo {
  std::string transform;             // "quantize", "prune", ...
  std::string command_line;          // as typed, for reproduction
  nlohmann::json details = nlohmann::json::object();  // what was done (mode, engine, per-layer scheme)
  // What it bought that the same command reproduces bit for bit (size, parameters, accuracy before/after).
  // Timings are not here: they differ run to run, and the artifact must not (same command + seed = same
  // bytes); they are in the command's report.
  nlohmann::json figures = nlohmann::json::object();
  std::vector<InputSpec> inputs;     // input shapes the artifact declares for later runs
};

// The lite.json document for an artifact derived from `source`. An earlier lite.json in the source is
// kept under "history", so a chain (prune, then quantize) stays traceable.
nlohmann::json make_provenance(const LoadedModel& source, const ArtifactInfo& info);

// Writes `module` to `output` with lite.json inside. Deterministic: the same module and info give the same
// bytes (the archive's root folder is always "archive", lite.json has no clock time). Throws InputError when `output` would overwrite
// the source model or its folder does not exist; nothing is left behind on failure.
void save_artifact(const torch::jit::Module& module, const std::filesystem::path& output, const LoadedModel& source,
                   const ArtifactInfo& info);

// Reads lite.json from any TorchScript file (null when absent).
nlohmann::json read_provenance(const std::filesystem::path& path);

}  // namespace lite::model

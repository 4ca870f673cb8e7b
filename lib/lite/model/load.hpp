#pragma once
// Loading TorchScript models with errors that say what is wrong and how to fix it.
#include <torch/script.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/model/input_spec.hpp"

namespace lite::model {

struct LoadedModel {
  torch::jit::Module module;
  std::filesystem::path path;
  uint64_t file_bytes = 0;
  std::string sha256;
  double load_ms = 0;  // wall time of torch::jit::load alone (cold start)
  // Contents of the archive's lite.json when an earlier lite run wrote it (null otherwise).
  nlohmann::json provenance;
  // Input shapes the archive declares (lite.json "inputs"); empty when it carries none.
  std::vector<InputSpec> declared_inputs;
  std::string declared_inputs_problem;  // why lite.json's "inputs" was not taken (e.g. does not fit in memory)
};

// Loads `path` in eval mode. Throws InputError for: a missing file, something that is not a zip archive
// (legacy torch.save pickles, ONNX files, anything else), a truncated archive, a torch.save file
// (state_dict or pickled nn.Module: "script or trace the model, then save it with torch.jit.save"),
// and archives libtorch refuses.
LoadedModel load_model(const std::filesystem::path& path);

// The checks load_model runs before handing the file to libtorch; throws the same errors. Exposed for
// tests and for commands that only need to validate a path.
void check_torchscript_archive(const std::filesystem::path& path);

// Name of the extra file every lite artifact carries.
inline constexpr const char* kProvenanceFile = "lite.json";

}  // namespace lite::model

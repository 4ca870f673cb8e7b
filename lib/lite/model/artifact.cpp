#include "lite/model/artifact.hpp"

#include <torch/version.h>

#include <fstream>
#include <sstream>

#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/version.hpp"

namespace fs = std::filesystem;

namespace lite::model {

nlohmann::json make_provenance(const LoadedModel& source, const ArtifactInfo& info) {
  nlohmann::json j{{"lite_version", version()},
                   {"git_commit", git_commit()},
                   {"libtorch_version", TORCH_VERSION},
                   {"command_line", info.command_line},
                   {"transform", info.transform},
                   {"details", info.details},
                   {"figures", info.figures},
                   {"input_model",
                    {{"path", source.path.string()}, {"sha256", source.sha256}, {"bytes", source.file_bytes}}}};
  j["inputs"] = info.inputs.empty() ? nlohmann::json(source.declared_inputs) : nlohmann::json(info.inputs);
  nlohmann::json history = nlohmann::json::array();
  if (source.provenance.is_object()) {
    nlohmann::json earlier = source.provenance;
    if (earlier.contains("history")) {
      history = earlier["history"];
      earlier.erase("history");
    }
    history.push_back(earlier);
  }
  j["history"] = history;
  // Provenance is data, read by any tool: options are named by their keys ("skip features.*"), not as
  // the {key} references the library's messages carry for the CLI to word as flags.
  for (const char* field : {"details", "figures"})
    render_option_refs_in(j[field], [](const std::string& key) { return key; });
  return j;
}

void save_artifact(const torch::jit::Module& module, const fs::path& output, const LoadedModel& source,
                   const ArtifactInfo& info) {
  check_output(output, {source.path}, "output");  // validate() checked it already; a last guard
  torch::jit::ExtraFilesMap extra{{kProvenanceFile, make_provenance(source, info).dump(2)}};
  // Serialized to memory first: saved to a path, torch names the archive's root folder after the file, which
  // here is a random temporary name, so the same command would not give the same bytes twice.
  std::ostringstream bytes;
  try {
    module.save(bytes, extra);
  } catch (const c10::Error& e) {
    throw InputError(output.string(), "cannot save the model: " + first_line(e.what_without_backtrace()),
                     "check free memory");
  }
  const std::string archive = bytes.str();
  write_atomically(output, [&](const fs::path& temp) {
    std::ofstream out(temp, std::ios::binary);
    out.write(archive.data(), static_cast<std::streamsize>(archive.size()));
    out.close();
    if (!out) throw InputError(output.string(), "write failed", "check free disk space and the folder's permissions");
  });
}

nlohmann::json read_provenance(const fs::path& path) {
  return load_model(path).provenance;
}

}  // namespace lite::model

#include "lite/model/artifact.hpp"

#include <torch/version.h>

#include <chrono>
#include <ctime>

#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/version.hpp"

namespace fs = std::filesystem;

namespace lite::model {

namespace {
std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}
}  // namespace

nlohmann::json make_provenance(const LoadedModel& source, const ArtifactInfo& info) {
  nlohmann::json j{{"lite_version", version()},
                   {"git_commit", git_commit()},
                   {"libtorch_version", TORCH_VERSION},
                   {"created_utc", utc_now()},
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
  check_output_path(output, source.path);
  torch::jit::ExtraFilesMap extra{{kProvenanceFile, make_provenance(source, info).dump(2)}};
  write_atomically(output, [&](const fs::path& temp) {
    try {
      module.save(temp.string(), extra);
    } catch (const c10::Error& e) {
      throw InputError(output.string(), "cannot save the model: " + first_line(e.what_without_backtrace()),
                       "check free disk space and permissions");
    }
  });
}

nlohmann::json read_provenance(const fs::path& path) {
  return load_model(path).provenance;
}

}  // namespace lite::model

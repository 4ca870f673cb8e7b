#pragma once
// The work folder of a search: every built variant and every measurement, keyed by the model's hash, the
// variant and the settings that shape the result, so an interrupted search (Ctrl-C, SIGTERM, a crash) resumes
// where it stopped and reaches the same answer, and a search with another target reuses every measurement.
// Each record is written atomically as it completes. Torch-free.
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lite/optimize/optimize.hpp"

namespace lite::optimize {

class WorkFolder {
 public:
  // Records live in DIR/<first 16 hex digits of the model's sha256>/; created when missing.
  WorkFolder(const std::filesystem::path& dir, const std::string& model_sha256);

  // The record name of a variant under settings (a JSON object of what its build or measurement depends on).
  static std::string key(const VariantSpec& spec, const nlohmann::json& settings);
  std::filesystem::path artifact(const std::string& key) const;  // <key>.pt
  std::optional<nlohmann::json> read(const std::string& key, const std::string& stage) const;
  void write(const std::string& key, const std::string& stage, const nlohmann::json& record) const;
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
};

// What identifies a data file in a key without hashing it: its absolute path, size and modification time.
nlohmann::json file_identity(const std::filesystem::path& path);

}  // namespace lite::optimize

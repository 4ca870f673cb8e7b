// The work folder of lite optimize (work_folder.hpp).
#include "lite/optimize/work_folder.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/sha256.hpp"

namespace lite::optimize {

namespace fs = std::filesystem;

WorkFolder::WorkFolder(const fs::path& dir, const std::string& model_sha256)
    : folder_(dir / model_sha256.substr(0, 16)) {
  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (ec)
    throw InputError(folder_.string(), "cannot create the work folder: " + ec.message(),
                     "give a writable {work_dir}");
}

std::string WorkFolder::key(const VariantSpec& spec, const nlohmann::json& settings) {
  const nlohmann::json identity = {{"prune_ratio", spec.prune_ratio},
                                   {"by_sensitivity", spec.by_sensitivity},
                                   {"recovered", spec.recovered},
                                   {"mode", spec.mode},
                                   {"settings", settings}};
  std::string name = spec.mode;
  if (spec.pruned())
    name = fmt::format("prune{}{}-{}", spec.by_sensitivity ? std::string("sens") : fmt::format("{:g}", spec.prune_ratio),
                       spec.recovered ? "r" : "", spec.mode);
  return name + "-" + sha256_hex(identity.dump()).substr(0, 12);
}

fs::path WorkFolder::artifact(const std::string& key) const { return folder_ / (key + ".pt"); }

std::optional<nlohmann::json> WorkFolder::read(const std::string& key, const std::string& stage) const {
  const fs::path path = folder_ / (key + "." + stage + ".json");
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  // A record cut short by a crash cannot exist (written atomically); one edited by hand into nonsense is redone.
  nlohmann::json record = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded() || !record.is_object()) return std::nullopt;
  return record;
}

void WorkFolder::write(const std::string& key, const std::string& stage, const nlohmann::json& record) const {
  write_file_atomically(folder_ / (key + "." + stage + ".json"), record.dump(1) + "\n");
}

nlohmann::json file_identity(const fs::path& path) {
  std::error_code path_error, size_error, time_error;
  const fs::path absolute = fs::absolute(path, path_error);
  const auto size = fs::file_size(path, size_error);
  const auto mtime = fs::last_write_time(path, time_error);
  return {{"path", path_error ? path.string() : absolute.string()},
          {"bytes", size_error ? 0 : uint64_t(size)},
          {"mtime", time_error ? 0 : int64_t(mtime.time_since_epoch().count())}};
}

}  // namespace lite::optimize

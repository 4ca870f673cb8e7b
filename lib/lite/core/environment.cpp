#include "lite/core/environment.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "lite/core/text.hpp"
#include "lite/core/version.hpp"

namespace lite {

namespace {
// The value of the first "<key>\t: value" line of /proc/cpuinfo ("" when absent).
std::string cpuinfo_value(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0 && line.find_first_not_of(" \t", key.size()) == line.find(':')) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto start = line.find_first_not_of(' ', colon + 1);
        return start == std::string::npos ? std::string() : line.substr(start);
      }
    }
  }
  return {};
}
}  // namespace

const std::vector<std::string>& cpu_feature_names() {
  static const std::vector<std::string> names = {"amx_int8",    "amx_bf16", "avx512_fp16", "avx512_bf16",
                                                 "avx512_vnni", "avx512f",  "avx2"};
  return names;
}

std::vector<std::string> cpu_features_in(const std::string& flags) {
  std::vector<std::string> words = split(flags, ' '), found;
  for (const auto& name : cpu_feature_names())
    if (std::find(words.begin(), words.end(), name) != words.end()) found.push_back(name);
  return found;
}

bool has_cpu_feature(const Environment& env, const std::string& name) {
  return std::find(env.cpu_features.begin(), env.cpu_features.end(), name) != env.cpu_features.end();
}

bool has_native_bf16(const Environment& env) {
  const std::string& isa = env.onednn_isa;
  if (!isa.empty() && isa.rfind("0x", 0) != 0)
    return isa.find("bf16") != std::string::npos || isa.find("amx") != std::string::npos;
  return has_cpu_feature(env, "avx512_bf16") || has_cpu_feature(env, "amx_bf16");
}

std::string describe_machine(const Environment& env) {
  std::string line = "machine: " + (env.cpu_model.empty() ? std::string("unknown CPU") : env.cpu_model) + ", " +
                     std::to_string(env.logical_cores) + " logical cores, " +
                     (env.cpu_features.empty() ? std::string("none of ") + join(cpu_feature_names(), "/")
                                               : join(env.cpu_features, " "));
  if (!env.onednn_isa.empty()) line += ", oneDNN ISA " + env.onednn_isa;
  if (!env.libtorch_version.empty())
    line += ", libtorch " + env.libtorch_version + ", " + std::to_string(env.intra_op_threads) + " intra-op thread" +
            (env.intra_op_threads == 1 ? "" : "s");
  return line;
}

Environment host_environment() {
  Environment e;
  e.lite_version = version();
  e.git_commit = git_commit();
  e.build_type = build_type();
  e.compiler = compiler();
  struct utsname u {};
  if (uname(&u) == 0) e.os = std::string(u.sysname) + " " + u.release;
  e.cpu_model = cpuinfo_value("model name");
  if (e.cpu_model.empty()) e.cpu_model = "unknown";
  e.cpu_features = cpu_features_in(cpuinfo_value("flags"));
  e.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  return e;
}

void to_json(nlohmann::json& j, const Environment& e) {
  j = nlohmann::json{{"lite_version", e.lite_version},
                     {"git_commit", e.git_commit},
                     {"build_type", e.build_type},
                     {"compiler", e.compiler},
                     {"os", e.os},
                     {"cpu_model", e.cpu_model},
                     {"cpu_features", e.cpu_features},
                     {"logical_cores", e.logical_cores}};
  if (!e.libtorch_version.empty()) {
    j["libtorch_version"] = e.libtorch_version;
    j["intra_op_threads"] = e.intra_op_threads;
    j["inter_op_threads"] = e.inter_op_threads;
    j["quantized_engine"] = e.quantized_engine;
    j["onednn_isa"] = e.onednn_isa;
  }
}

}  // namespace lite

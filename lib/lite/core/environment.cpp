#include "lite/core/environment.hpp"

#include <sys/utsname.h>

#include <fstream>
#include <thread>

#include "lite/core/version.hpp"

namespace lite {

namespace {
std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto start = line.find_first_not_of(' ', colon + 1);
        return start == std::string::npos ? std::string() : line.substr(start);
      }
    }
  }
  return "unknown";
}
}  // namespace

Environment host_environment() {
  Environment e;
  e.lite_version = version();
  e.git_commit = git_commit();
  e.build_type = build_type();
  e.compiler = compiler();
  struct utsname u {};
  if (uname(&u) == 0) e.os = std::string(u.sysname) + " " + u.release;
  e.cpu_model = read_cpu_model();
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
                     {"logical_cores", e.logical_cores}};
  if (!e.libtorch_version.empty()) {
    j["libtorch_version"] = e.libtorch_version;
    j["intra_op_threads"] = e.intra_op_threads;
    j["inter_op_threads"] = e.inter_op_threads;
    j["quantized_engine"] = e.quantized_engine;
  }
}

}  // namespace lite

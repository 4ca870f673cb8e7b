#pragma once
// Where a measurement was taken. Every JSON report carries one, so figures from two machines or two
// thread settings are never compared by accident.
#include <string>

#include <nlohmann/json.hpp>

namespace lite {

struct Environment {
  std::string lite_version, git_commit, build_type, compiler;
  std::string os;         // uname sysname + release
  std::string cpu_model;  // /proc/cpuinfo "model name"
  int logical_cores = 0;
  // Filled by lite::torch code (add_torch_environment); empty in torch-free tools.
  std::string libtorch_version;
  int intra_op_threads = 0;
  int inter_op_threads = 0;
  std::string quantized_engine;
};

// Host facts only (no torch).
Environment host_environment();

void to_json(nlohmann::json& j, const Environment& e);

}  // namespace lite

#pragma once
// Where a measurement was taken. Every JSON report carries one, so figures from two machines or two
// thread settings are never compared by accident.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite {

struct Environment {
  std::string lite_version, git_commit, build_type, compiler;
  std::string os;         // uname sysname + release
  std::string cpu_model;  // /proc/cpuinfo "model name"
  // The instruction-set extensions that decide which kernels run (/proc/cpuinfo "flags", detected on each
  // run): the subset of cpu_feature_names() this CPU has, e.g. {"avx2", "avx512f", "avx512_vnni"}.
  std::vector<std::string> cpu_features;
  int logical_cores = 0;
  // Filled by lite::torch code (add_torch_environment); empty in torch-free tools.
  std::string libtorch_version;
  int intra_op_threads = 0;
  int inter_op_threads = 0;
  std::string quantized_engine;
  std::string onednn_isa;  // the ISA oneDNN dispatches to here (dnnl_get_effective_cpu_isa), "" when unknown
};

// Host facts only (no torch).
Environment host_environment();

// The /proc/cpuinfo flags lite reports, widest first: amx_int8, amx_bf16, avx512_fp16, avx512_bf16,
// avx512_vnni, avx512f, avx2.
const std::vector<std::string>& cpu_feature_names();
// The subset of cpu_feature_names() among the space-separated `flags` (a /proc/cpuinfo "flags" value).
std::vector<std::string> cpu_features_in(const std::string& flags);
bool has_cpu_feature(const Environment& env, const std::string& name);
// Whether bf16 matrix kernels run natively: oneDNN dispatches to a bf16 or AMX ISA (ONEDNN_MAX_CPU_ISA can lower it
// below what the CPU has), or, where oneDNN's ISA is unknown, the CPU has avx512_bf16 or amx_bf16. Without it bf16
// is emulated, several times slower than float32.
bool has_native_bf16(const Environment& env);
// One line for text reports: "Intel(R) Xeon(R) ..., 2 cores, avx2 avx512f avx512_vnni, oneDNN avx512_core_vnni".
std::string describe_machine(const Environment& env);

void to_json(nlohmann::json& j, const Environment& e);

}  // namespace lite

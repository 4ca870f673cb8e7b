// The environment every report carries: CPU features detected from /proc/cpuinfo flags, and the one-line
// machine description the text printers end with.
#include <doctest/doctest.h>

#include <sstream>

#include "lite/core/environment.hpp"
#include "lite/core/report.hpp"

using namespace lite;

TEST_CASE("cpu features: the reported subset of a flags line, widest first") {
  CHECK(cpu_features_in("fpu avx avx2 avx512f avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8") ==
        std::vector<std::string>{"amx_int8", "amx_bf16", "avx512_bf16", "avx512_vnni", "avx512f", "avx2"});
  CHECK(cpu_features_in("fpu sse4_2 avx").empty());
  // Whole words only: avx512_fp16 is not avx512f.
  CHECK(cpu_features_in("avx512_fp16") == std::vector<std::string>{"avx512_fp16"});
}

TEST_CASE("this machine's environment names its CPU and features, in JSON and in text reports") {
  Environment env = host_environment();
  CHECK(!env.cpu_model.empty());
  for (const auto& f : env.cpu_features) CHECK(has_cpu_feature(env, f));
  nlohmann::json j = env;
  CHECK(j.at("cpu_features").is_array());
  report::Report r;
  r.environment = env;
  std::ostringstream out;
  report::print(r, report::Format::text, out);
  CHECK(out.str().find("machine: " + env.cpu_model) != std::string::npos);
}

TEST_CASE("native bf16: oneDNN's dispatch ISA decides, the CPU flags where it is unknown") {
  Environment env;
  env.cpu_features = {"avx512_bf16", "avx512f", "avx2"};
  env.onednn_isa = "avx512_core_bf16";
  CHECK(has_native_bf16(env));
  env.onednn_isa = "avx512_core_amx";
  CHECK(has_native_bf16(env));
  env.onednn_isa = "avx2";  // ONEDNN_MAX_CPU_ISA=AVX2 on a CPU that has avx512_bf16: oneDNN emulates
  CHECK_FALSE(has_native_bf16(env));
  env.onednn_isa = "";
  CHECK(has_native_bf16(env));
  env.cpu_features = {"avx512f", "avx2"};
  CHECK_FALSE(has_native_bf16(env));
  env.onednn_isa = "0x1234";  // a value this table does not name
  CHECK_FALSE(has_native_bf16(env));
}

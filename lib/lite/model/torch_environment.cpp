#include "lite/model/torch_environment.hpp"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/version.h>

#include <cstdio>
#include <thread>

#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"

namespace lite {

std::string libtorch_version() { return TORCH_VERSION; }

namespace {
const char* engine_name(at::QEngine e) {
  switch (e) {
    case at::QEngine::NoQEngine: return "none";
    case at::QEngine::FBGEMM: return "fbgemm";
    case at::QEngine::QNNPACK: return "qnnpack";
    case at::QEngine::ONEDNN: return "onednn";
    default: return "unknown";  // engines of later libtorch versions (X86, ...)
  }
}
}  // namespace

std::vector<std::string> quantized_engines() {
  std::vector<std::string> names;
  for (auto e : at::globalContext().supportedQEngines())
    if (e != at::QEngine::NoQEngine) names.push_back(engine_name(e));
  return names;
}

void select_quantized_engine(const std::string& name) {
  for (auto e : at::globalContext().supportedQEngines()) {
    if (e != at::QEngine::NoQEngine && name == engine_name(e)) {
      at::globalContext().setQEngine(e);
      return;
    }
  }
  throw_unknown_name("qengine", "quantized engine", name, quantized_engines());
}

std::string current_quantized_engine() { return engine_name(at::globalContext().qEngine()); }

void set_intra_op_threads(int threads) {
  option_rules::thread_count("threads", threads);
  if (threads > 0) at::set_num_threads(threads);
}

AllCoresForWork::AllCoresForWork(bool pinned) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (pinned || cores <= at::get_num_threads()) return;
  previous_ = at::get_num_threads();
  at::set_num_threads(cores);
}

AllCoresForWork::~AllCoresForWork() {
  if (previous_ > 0) at::set_num_threads(previous_);
}

namespace {
// oneDNN's run-time dispatch ISA. libtorch links oneDNN (libdnnl.so.2 on Debian) without installing its
// headers, so the C API function is looked up in the process: "" when this libtorch carries no oneDNN. The
// names are oneDNN 2.x's dnnl_cpu_isa_t values; ONEDNN_MAX_CPU_ISA in the environment lowers it.
std::string onednn_isa() {
  using Query = int (*)();
  auto query = reinterpret_cast<Query>(::dlsym(RTLD_DEFAULT, "dnnl_get_effective_cpu_isa"));
  if (!query) return {};
  const int isa = query();
  static const std::pair<int, const char*> kNames[] = {
      {0x0, "all"},          {0x1, "sse41"},           {0x3, "avx"},
      {0x7, "avx2"},         {0xf, "avx512_mic"},      {0x1f, "avx512_mic_4ops"},
      {0x27, "avx512_core"}, {0x67, "avx512_core_vnni"}, {0xe7, "avx512_core_bf16"},
      {0x3e7, "avx512_core_amx"}, {0x407, "avx2_vnni"}};
  for (const auto& [value, name] : kNames)
    if (value == isa) return name;
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%x", unsigned(isa));
  return hex;
}
}  // namespace

void add_torch_environment(Environment& env) {
  env.onednn_isa = onednn_isa();
  env.libtorch_version = libtorch_version();
  env.intra_op_threads = at::get_num_threads();
  env.inter_op_threads = at::get_num_interop_threads();
  env.quantized_engine = current_quantized_engine();
}

const Environment& cpu_rule_environment() {
  static const Environment env = [] {
    Environment e = host_environment();
    add_torch_environment(e);
    return e;
  }();
  return env;
}

report::Report torch_verb_report(const std::string& command, nlohmann::json result) {
  report::Report rep;
  rep.command = command;
  rep.environment = host_environment();
  add_torch_environment(rep.environment);
  rep.result = std::move(result);
  return rep;
}

}  // namespace lite

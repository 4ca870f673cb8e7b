#include "lite/model/torch_environment.hpp"

#include <ATen/Parallel.h>
#include <torch/version.h>

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

void add_torch_environment(Environment& env) {
  env.libtorch_version = libtorch_version();
  env.intra_op_threads = at::get_num_threads();
  env.inter_op_threads = at::get_num_interop_threads();
  env.quantized_engine = current_quantized_engine();
}

}  // namespace lite

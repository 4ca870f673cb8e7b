// A TorchScript module to and from memory (see module_bytes.hpp): the one copy prune and quantize share.
#include "lite/model/module_bytes.hpp"

#include <torch/jit.h>

#include <sstream>

namespace lite::model {

std::string serialize(const torch::jit::Module& module) {
  std::ostringstream out;
  module.save(out);
  return out.str();
}

torch::jit::Module deserialize(const std::string& bytes) {
  std::istringstream in(bytes);
  torch::jit::Module loaded = torch::jit::load(in);
  loaded.eval();
  return loaded;
}

}  // namespace lite::model

#pragma once
// Model facts: parameters, sizes, dtypes and multiply-accumulates per layer. Torch-free structs; they
// are computed by measure_facts (facts_torch.hpp).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite::model {

struct LayerFacts {
  std::string module;  // module path, e.g. "features.0" (empty when the op is not inside a submodule)
  std::string module_type;  // e.g. "Conv2d"
  std::string op;      // e.g. "aten::conv2d", "quantized::conv2d_relu"
  std::vector<int64_t> input_shape, output_shape;
  uint64_t macs = 0;   // multiply-accumulates for one forward at the measured input
};

struct ModelFacts {
  uint64_t file_bytes = 0;
  uint64_t parameters = 0;      // elements of weights and biases (including packed/quantized weights)
  uint64_t tensor_bytes = 0;    // bytes of all weight, bias and buffer tensors
  std::map<std::string, uint64_t> elements_by_dtype;  // e.g. {"float32": 390858}
  std::vector<LayerFacts> layers;  // compute layers in execution order
  uint64_t total_macs = 0;
  std::vector<int64_t> measured_input_shape;  // the input the MACs were counted at
};

void to_json(nlohmann::json& j, const LayerFacts& l);
void to_json(nlohmann::json& j, const ModelFacts& f);

// "TOP(Net)::forward/features(Sequential)::forward/0(Conv2d)::forward/SELF(Conv2d)::_conv_forward/"
// -> {"features.0", "Conv2d"}: the innermost named submodule of a TorchScript module hierarchy.
std::pair<std::string, std::string> module_from_hierarchy(const std::vector<std::string>& frames);

}  // namespace lite::model

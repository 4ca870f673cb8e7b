// The mode table: the one place a quantization scheme is registered. Each entry says what the mode does, not what
// it measured: speed and accuracy depend on the CPU and the model, each run measures its own, and the figures of
// the bundled CNN on a named machine are in docs/quantize.md "Modes".
#include "lite/core/error.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"
#include "lite/quantize/scheme.hpp"

namespace lite::quantize {

const std::vector<ModeEntry>& modes() {
  static const std::vector<ModeEntry> table = {
      {"auto", "int8", "build each mode that applies, keep the fastest within {tolerance}", nullptr},
      {"static", "int8", "int8 weights and activations, calibrated on {calib}", &static_scheme()},
      {"dynamic", "int8", "int8 Linear weights only, activations quantized per call", &dynamic_scheme()},
      {"fp16", "fp16", "float16 weights, float32 compute; for size", &fp16_scheme()},
      {"bf16", "bf16", "bfloat16 weights and compute; float32 input and output", &bf16_scheme()},
      {"weight-int8", "weight-int8", "int8 weights, a scale per group of 64; for size", &weight_int8_scheme()},
      {"weight-int4", "weight-int4", "int4 weights, a scale per group of 64; for size", &weight_int4_scheme()},
  };
  return table;
}

std::vector<std::string> mode_names() {
  std::vector<std::string> names;
  for (const auto& m : modes()) names.push_back(m.name);
  return names;
}

const ModeEntry& find_mode(const std::string& name) {
  return find_named(modes(), name, "mode", "mode", [](const ModeEntry& m) { return std::vector<std::string>{m.name}; });
}

}  // namespace lite::quantize

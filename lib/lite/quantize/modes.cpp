// The mode table: the one place a quantization scheme is registered. The "measured" column is what
// each mode did to the bundled Fashion-MNIST CNN on a 2-core AMD EPYC (Zen 4) machine (1 thread,
// onednn; `lite quantize data/fmnist_cnn.pt --calib data/fmnist_eval.pt --eval <10k test set>`):
// size against the input file, latency against the frozen float model (torch::jit::freeze +
// optimize_for_inference), top-1 against float's 92.34% on the 10k test set. See docs/quantize.md "Modes".
#include "lite/core/error.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"
#include "lite/quantize/scheme.hpp"

namespace lite::quantize {

uint64_t LayerInfo::weight_elements() const {
  uint64_t n = weight_shape.empty() ? 0 : 1;
  for (auto d : weight_shape) n *= static_cast<uint64_t>(d);
  return n;
}

void to_json(nlohmann::json& j, const LayerInfo& l) {
  j = nlohmann::json{
      {"name", l.name}, {"kind", l.kind}, {"op", l.op}, {"weight_shape", l.weight_shape}, {"bias", l.bias}};
}

void to_json(nlohmann::json& j, const FloatOnlyLayer& l) {
  j = nlohmann::json{{"name", l.name},
                     {"kind", l.kind},
                     {"weight_shape", l.weight_shape},
                     {"bytes", l.bytes},
                     {"reason", l.reason},
                     {"dynamic_int8", l.dynamic_int8}};
}

const std::vector<ModeEntry>& modes() {
  static const std::vector<ModeEntry> table = {
      {"auto", "int8",
       "try every mode that applies, measure each here, keep the fastest that meets {tolerance} (default)",
       "picks static on the CNN", nullptr},
      {"static", "int8",
       "int8 weights (per channel) and activations, calibrated on {calib}; conv-bn folded, conv/linear+relu fused",
       "size 0.26x, latency 0.37x at batch 1 and 64, top-1 -0.03 points (92.31%)", &static_scheme()},
      {"dynamic", "int8",
       "int8 Linear weights, activations quantized at run time; convolutions stay float (no calibration)",
       "size 0.43x, latency 1.5x b1 / 2.1x b64 (convolutions stay float), top-1 -0.02 points", &dynamic_scheme()},
      {"fp16", "fp16", "float16 weights, float32 compute (libtorch 1.13 has no float16 CPU kernels); halves the file",
       "size 0.49x, latency 1.5x b1 / 2.1x b64 (float32 compute on plain aten convolutions), top-1 -0.00 points",
       &fp16_scheme()},
      {"bf16", "bf16", "bfloat16 weights and compute (oneDNN AVX512-BF16), float32 input and output",
       "size 0.49x, latency 1.1x b1 / 2.2x b64, top-1 -0.02 points", &bf16_scheme()},
      {"weight-int8", "weight-int8", "int8 weights, one scale per group of 64, dequantized in the graph; for size",
       "size 0.26x, latency 1.6x b1 / 2.4x b64, top-1 -0.01 points", &weight_int8_scheme()},
      {"weight-int4", "weight-int4",
       "int4 weights (two per byte), one scale per group of 64, dequantized in the graph; for size",
       "size 0.14x, latency 1.8x b1 / 2.1x b64, top-1 -0.46 points", &weight_int4_scheme()},
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

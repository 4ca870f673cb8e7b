#pragma once
// Quantization schemes, one file each (scheme_<name>.cpp), each behind the small interface below, and
// listed in ONE table, modes(), that drives --mode parsing, the help text, "did you mean", docs/quantize.md
// table and the tests that loop over every mode. Torch-free: a scheme's planning side (which layers it
// touches and what they will weigh) needs no torch; its build side takes a BuildContext that only the
// torch code (quantize_internal.hpp) defines.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/environment.hpp"

namespace lite::quantize {

// A layer whose weights every mode but bf16 leaves in float (Embedding, LSTM, GRU, RNN): listed so that a plan
// shows where the bytes it does not reach are.
struct FloatOnlyLayer {
  std::string name;              // module path, e.g. "rnn"
  std::string kind;              // "Embedding", "LSTM", "GRU", "RNN"
  std::vector<int64_t> weight_shape;  // the first weight (Embedding: vocabulary x dimension; recurrent: weight_ih_l0)
  uint64_t bytes = 0;            // every weight and bias of the layer
  std::string reason;
  bool dynamic_int8 = false;     // what dynamic mode makes int8: LSTM/GRU (dynamic_recurrent.cpp), embedding tables
                                 // (dynamic_embedding.cpp; static mode too)
};
void to_json(nlohmann::json& j, const FloatOnlyLayer& l);

// A layer lite can quantize: a convolution or linear layer found in the model's forward graph.
struct LayerInfo {
  std::string name;  // module path, e.g. "features.0" (or "<kind>#<n>" for a call outside any submodule)
  std::string kind;  // "Conv2d", "Linear", "Conv1d", "Conv3d", "ConvTranspose2d", ...
  std::string op;    // "aten::conv2d", ...
  std::vector<int64_t> weight_shape;
  int64_t bias = 0;  // bias elements (0 without bias)
  // The weight belongs to an nn.MultiheadAttention (its packed in_proj, or its out_proj): its forward hands
  // the weights to F.multi_head_attention_forward or the fused fast path instead of calling the layers.
  bool in_multihead_attention = false;

  uint64_t weight_elements() const;
  uint64_t float_bytes() const { return 4 * (weight_elements() + static_cast<uint64_t>(bias)); }
};
void to_json(nlohmann::json& j, const LayerInfo& l);

struct BuildContext;  // quantize_internal.hpp (torch)

class Scheme {
 public:
  virtual ~Scheme() = default;
  // What a layer becomes under this scheme ("int8 weights per channel, uint8 activations"), or ""
  // when the scheme leaves layers of this kind in float (dynamic mode and convolutions).
  virtual std::string layer_scheme(const LayerInfo& layer) const = 0;
  // Bytes the layer's weight and bias take in the artifact under this scheme.
  virtual uint64_t layer_bytes(const LayerInfo& layer) const = 0;
  // Why the scheme keeps this layer in float although it could quantize it ("" when it does not): a
  // layer so small that the int8 kernel's fixed cost exceeds its float compute.
  virtual std::string keep_float_reason(const LayerInfo& layer) const { return {}; }
  // Why the scheme cannot convert this layer although it converts its kind ("" when it can): the layer
  // stays float whatever the flags, and the plan says why.
  virtual std::string unsupported_reason(const LayerInfo& layer) const { return {}; }
  // Static int8 needs calibration data.
  virtual bool needs_calibration() const { return false; }
  // Why this scheme cannot be used with the quantized engine `engine` ("" when it can).
  virtual std::string engine_problem(const std::string& engine) const { return {}; }
  // Why auto need not build this scheme on this CPU (it cannot win here), "" when it may: predicted from the CPU's
  // features, so an emulated mode is not built and timed only to lose. An explicit {mode} is built regardless.
  virtual std::string cpu_problem(const Environment& env) const { return {}; }
  // Builds the transformed module described by ctx.plan into ctx.result.
  virtual void build(BuildContext& ctx) const = 0;
};

struct ModeEntry {
  const char* name;      // --mode value
  const char* tag;       // default output name: MODEL.<tag>.pt
  const char* summary;   // one line for --help: what it does (what it measured is in docs/quantize.md "Modes")
  const Scheme* scheme;  // nullptr for auto
};

// The table: auto, static, dynamic, fp16, bf16, weight-int8, weight-int4.
const std::vector<ModeEntry>& modes();
std::vector<std::string> mode_names();
// Throws UsageError naming the known modes (and the closest one) for an unknown name.
const ModeEntry& find_mode(const std::string& name);

// The schemes (scheme_<name>.cpp).
const Scheme& static_scheme();
const Scheme& dynamic_scheme();
const Scheme& fp16_scheme();
const Scheme& bf16_scheme();
const Scheme& weight_int8_scheme();
const Scheme& weight_int4_scheme();

}  // namespace lite::quantize

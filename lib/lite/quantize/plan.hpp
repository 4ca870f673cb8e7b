#pragma once
// The plan: which layer gets which scheme and what the artifact will weigh. Made before anything is
// built (it is what --dry-run prints) and then followed by the scheme's build. Torch-free.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/quantize/scheme.hpp"

namespace lite::quantize {

struct LayerPlan {
  LayerInfo layer;
  bool quantized = false;
  std::string scheme;  // what the layer becomes ("float" when kept)
  // Why a layer stays float: "{skip} features.*", "not in {only}", "sensitive: kept float to meet {tolerance}", ...
  // The {name} placeholders are worded as the calling verb's flags when printed.
  std::string reason;
  uint64_t bytes_before = 0, bytes_after = 0;
};

// A module kept float as a whole because quantization cannot go through a construct in it (an `if` whose
// condition depends on data); every layer under it stays float.
struct FloatRegion {
  std::string module;     // module path ("features.2.0.gate")
  std::string construct;  // what stopped quantization, with its source location
};
void to_json(nlohmann::json& j, const FloatRegion& r);

struct Plan {
  std::string mode;
  std::string engine;
  std::vector<LayerPlan> layers;
  uint64_t file_bytes_before = 0;
  uint64_t weight_bytes_before = 0, weight_bytes_after = 0;
  uint64_t expected_file_bytes = 0;  // file size minus what the quantized layers save
  std::vector<FloatRegion> float_regions;  // found while building (static/dynamic int8)

  size_t quantized_layers() const;
  std::vector<std::string> float_layers() const;  // names of layers kept in float
};

void to_json(nlohmann::json& j, const LayerPlan& l);
void to_json(nlohmann::json& j, const Plan& p);

// Keeps every layer inside `regions` float (reason names the region) and records the regions; the byte
// figures follow.
void apply_float_regions(Plan& plan, const std::vector<FloatRegion>& regions);


// Throws UsageError when a --skip or --only pattern matches no layer (listing the layer names).
void check_layer_globs(const std::vector<LayerInfo>& layers, const std::vector<std::string>& skip,
                       const std::vector<std::string>& only);

// The plan for `mode` (not auto). A layer is quantized when the scheme handles its kind, it matches
// --only (when given), it matches no --skip and it is not in `keep_float` (chosen by the tolerance
// search). Throws InputError (naming `model_file`) when the model has no layer the scheme can
// quantize.
Plan make_plan(const std::vector<LayerInfo>& layers, const ModeEntry& mode, const std::string& engine,
               const std::vector<std::string>& skip, const std::vector<std::string>& only,
               const std::set<std::string>& keep_float, uint64_t file_bytes);

}  // namespace lite::quantize

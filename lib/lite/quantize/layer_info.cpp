// A layer's description (LayerInfo, FloatOnlyLayer): its weight count and its JSON form, shared by the plan,
// the report and the dry run.
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

}  // namespace lite::quantize

#include "lite/model/facts.hpp"

namespace lite::model {

void to_json(nlohmann::json& j, const LayerFacts& l) {
  j = nlohmann::json{{"module", l.module}, {"module_type", l.module_type}, {"op", l.op},
                     {"input_shape", l.input_shape}, {"output_shape", l.output_shape}, {"macs", l.macs}};
}

void to_json(nlohmann::json& j, const ModelFacts& f) {
  j = nlohmann::json{{"file_bytes", f.file_bytes},     {"parameters", f.parameters},
                     {"tensor_bytes", f.tensor_bytes}, {"elements_by_dtype", f.elements_by_dtype},
                     {"total_macs", f.total_macs},     {"measured_input_shape", f.measured_input_shape},
                     {"layers", f.layers}};
}

std::pair<std::string, std::string> module_from_hierarchy(const std::vector<std::string>& frames) {
  std::string path, type;
  for (const auto& frame : frames) {
    // frame: "name(Type)::method"; "TOP(...)" is the root and "SELF(...)" a call on the same module.
    auto open = frame.find('(');
    auto close = frame.find(')', open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos) continue;
    std::string name = frame.substr(0, open);
    std::string frame_type = frame.substr(open + 1, close - open - 1);
    if (name == "TOP" || name == "SELF" || name.empty()) {
      if (name == "SELF" && !frame_type.empty()) type = frame_type;
      continue;
    }
    path += (path.empty() ? "" : ".") + name;
    type = frame_type;
  }
  return {path, type};
}

}  // namespace lite::model

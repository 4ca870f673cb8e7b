#include "lite/model/input_spec.hpp"

#include <algorithm>
#include <charconv>
#include <ostream>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

namespace lite::model {

const std::vector<std::string>& input_dtypes() {
  static const std::vector<std::string> names = {"float32", "float16", "bfloat16", "int64", "int32", "uint8"};
  return names;
}

InputSpec parse_input_spec(const std::string& text) {
  const std::string form = "expected DIMxDIMx...[:DTYPE], e.g. --input 1x3x224x224 or --input 8x128:int64";
  InputSpec spec;
  std::string shape_text = text;
  auto colon = text.find(':');
  if (colon != std::string::npos) {
    shape_text = text.substr(0, colon);
    spec.dtype = to_lower(trim(text.substr(colon + 1)));
    const auto& known = input_dtypes();
    if (std::find(known.begin(), known.end(), spec.dtype) == known.end())
      throw UsageError("--input '" + text + "': " + unknown_name_message("dtype", spec.dtype, known));
  }
  shape_text = trim(shape_text);
  if (shape_text.empty()) throw UsageError("--input '" + text + "': empty shape; " + form);
  for (const auto& part : split(to_lower(shape_text), 'x')) {
    std::string dim = trim(part);
    if (dim.empty() || dim.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--input '" + text + "': '" + dim + "' is not a positive dimension; " + form);
    long long value = 0;
    const auto [end, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);  // no throw on overflow
    if (ec != std::errc() || end != dim.data() + dim.size() || value <= 0 || value > (1LL << 31))
      throw UsageError("--input '" + text + "': dimension " + dim + " is out of range; " + form);
    spec.shape.push_back(value);
  }
  return spec;
}

std::string to_string(const InputSpec& spec) {
  std::vector<std::string> dims;
  for (auto d : spec.shape) dims.push_back(std::to_string(d));
  return join(dims, "x") + (spec.dtype == "float32" ? "" : ":" + spec.dtype);
}

std::vector<InputSpec> with_batch(std::vector<InputSpec> specs, int64_t batch) {
  if (batch <= 0) return specs;
  for (auto& s : specs)
    if (!s.shape.empty()) s.shape[0] = batch;
  return specs;
}

std::ostream& operator<<(std::ostream& out, const InputSpec& s) { return out << to_string(s); }

void to_json(nlohmann::json& j, const InputSpec& s) { j = nlohmann::json{{"shape", s.shape}, {"dtype", s.dtype}}; }

void from_json(const nlohmann::json& j, InputSpec& s) {
  s.shape = j.at("shape").get<std::vector<int64_t>>();
  s.dtype = j.value("dtype", std::string("float32"));
}

}  // namespace lite::model

#include "lite/model/input_spec.hpp"

#include <algorithm>
#include <charconv>
#include <ostream>

#include <unistd.h>

#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::model {

const std::vector<std::string>& input_dtypes() {
  static const std::vector<std::string> names = {"float32", "float16", "bfloat16", "int64", "int32", "uint8"};
  return names;
}

InputSpec parse_input_spec(const std::string& text) {
  // Keyed by option "inputs" (the CLI's --input); a recipe or --config file names the same key.
  const std::string form = "expected DIMxDIMx...[:DTYPE], e.g. 1x3x224x224 or 8x128:int64";
  const std::string quoted = "'" + text + "': ";
  InputSpec spec;
  std::string shape_text = text;
  auto colon = text.find(':');
  if (colon != std::string::npos) {
    shape_text = text.substr(0, colon);
    spec.dtype = to_lower(trim(text.substr(colon + 1)));
    const auto& known = input_dtypes();
    if (std::find(known.begin(), known.end(), spec.dtype) == known.end())
      throw OptionError("inputs", quoted + unknown_name_message("dtype", spec.dtype, known),
                        "write SHAPE:DTYPE with one of those dtypes, e.g. 1x128:int64");
  }
  shape_text = trim(shape_text);
  if (shape_text.empty()) throw OptionError("inputs", quoted + "empty shape", form);
  for (const auto& part : split(to_lower(shape_text), 'x')) {
    std::string dim = trim(part);
    if (dim.empty() || dim.find_first_not_of("0123456789") != std::string::npos)
      throw OptionError("inputs", quoted + "'" + dim + "' is not a positive dimension", form);
    long long value = 0;
    const auto [end, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);  // no throw on overflow
    if (ec != std::errc() || end != dim.data() + dim.size() || value <= 0 || value > (1LL << 31))
      throw OptionError("inputs", quoted + "dimension " + dim + " is out of range (1 to 2^31)", form);
    spec.shape.push_back(value);
  }
  check_input_size(spec, std::nullopt);
  return spec;
}

uint64_t dtype_bytes(const std::string& dtype) {
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "int64") return 8;
  if (dtype == "uint8") return 1;
  return 4;
}

void check_input_size(const InputSpec& spec, std::optional<int64_t> batch) {
  // One input tensor must fit in memory with room for the model's activations: at most half of RAM.
  long double elements = 1;
  for (size_t i = 0; i < spec.shape.size(); ++i) elements *= (i == 0 && batch) ? *batch : spec.shape[i];
  const long double bytes = elements * dtype_bytes(spec.dtype);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const long double limit = pages > 0 && page > 0 ? (long double)pages * page / 2 : (long double)(1ULL << 34);
  if (bytes > limit)
    throw OptionError(batch ? "batch" : "inputs",
                      "'" + to_string(spec) + (batch ? " at batch " + std::to_string(*batch) : std::string()) +
                          "' needs " + format_bytes(double(bytes)) + " for one input tensor, more than half of this "
                          "machine's " + format_bytes(double(limit) * 2) + " of memory",
                      "use a smaller shape or batch");
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
  if (j.is_string()) {  // "1x3x224x224[:dtype]", the form --input takes (and recipe steps' "inputs" lists)
    try {
      s = parse_input_spec(j.get<std::string>());
    } catch (const OptionError& e) {  // a plain usage error: the options reader names the key it was read under
      throw UsageError(e.problem() + (e.fix().empty() ? "" : "; " + e.fix()));
    }
    return;
  }
  // {"shape": [...], "dtype": ...}, as a model's lite.json declares it: a model file is untrusted input, so its
  // dimensions and dtype pass the rule --input's do (positive, at most 2^31, a known dtype, fits in memory).
  // A fractional or string dimension is refused, not truncated or skipped, as --input would refuse it.
  const std::string form = "each input is \"1x3x224x224[:dtype]\" or {\"shape\": [1, 3, 224, 224], \"dtype\": ...}";
  if (!j.is_object() || !j.contains("shape") || !j["shape"].is_array())
    throw UsageError("an input is " + std::string(j.type_name()) + (j.is_object() ? " without a \"shape\" list" : "") +
                     "; " + form);
  InputSpec declared;
  for (const auto& dim : j["shape"]) {
    if (!dim.is_number_integer())
      throw UsageError("a dimension is " + shorten(dim.dump(), 40) + ", not a whole number; " + form);
    if (dim.is_number_unsigned() && dim.get<uint64_t>() > uint64_t(INT64_MAX))
      throw UsageError("a dimension is " + dim.dump() + ", beyond 64 bits; " + form);
    declared.shape.push_back(dim.get<int64_t>());
  }
  if (j.contains("dtype") && !j["dtype"].is_string())
    throw UsageError("\"dtype\" is " + shorten(j["dtype"].dump(), 40) + ", not a name; " + form);
  declared.dtype = j.value("dtype", std::string("float32"));
  from_json(nlohmann::json(to_string(declared)), s);
}

}  // namespace lite::model

#pragma once
// Input specifications: "--input 1x3x224x224:float32". Torch-free so the CLI can parse and validate
// flags without torch headers.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite::model {

struct InputSpec {
  std::vector<int64_t> shape;
  std::string dtype = "float32";  // float32 | float16 | bfloat16 | int64 | int32 | uint8

  bool operator==(const InputSpec& o) const { return shape == o.shape && dtype == o.dtype; }
};

// The dtypes an --input may name.
const std::vector<std::string>& input_dtypes();

// Parses "1x3x224x224" or "8x128:int64". Throws OptionError keyed "inputs" naming the text and the expected
// form, also when one such tensor would need more than half of this machine's memory.
InputSpec parse_input_spec(const std::string& text);
// Bytes per element of an input dtype.
uint64_t dtype_bytes(const std::string& dtype);
// OptionError ("inputs", or "batch" when given) when one input tensor, with its batch dimension replaced by
// `batch`, would need more than half of this machine's memory.
void check_input_size(const InputSpec& spec, std::optional<int64_t> batch);
std::string to_string(const InputSpec& spec);
// Returns copies with the leading (batch) dimension replaced; batch <= 0 leaves them unchanged.
std::vector<InputSpec> with_batch(std::vector<InputSpec> specs, int64_t batch);

std::ostream& operator<<(std::ostream& out, const InputSpec& s);  // for test failure messages

void to_json(nlohmann::json& j, const InputSpec& s);
void from_json(const nlohmann::json& j, InputSpec& s);

}  // namespace lite::model

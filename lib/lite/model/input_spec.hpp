#pragma once
// Input specifications: "--input 1x3x224x224:float32". Torch-free so the CLI can parse and validate
// flags without torch headers.
#include <cstdint>
#include <iosfwd>
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

// Parses "1x3x224x224" or "8x128:int64". Throws UsageError naming the flag text and the expected form.
InputSpec parse_input_spec(const std::string& text);
std::string to_string(const InputSpec& spec);
// Returns copies with the leading (batch) dimension replaced; batch <= 0 leaves them unchanged.
std::vector<InputSpec> with_batch(std::vector<InputSpec> specs, int64_t batch);

std::ostream& operator<<(std::ostream& out, const InputSpec& s);  // for test failure messages

void to_json(nlohmann::json& j, const InputSpec& s);
void from_json(const nlohmann::json& j, InputSpec& s);

}  // namespace lite::model

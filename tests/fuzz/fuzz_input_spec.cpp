// Fuzz target: the --input parser, lite::model::parse_input_spec ("1x3x224x224", "8x128:int64"). The parser is
// torch-free (lib/lite/model/input_spec.cpp needs only lite::core), so this target compiles that one file
// instead of linking lite::torch. Input: the flag's text. Invariants: every dimension is positive, the dtype is
// one of input_dtypes(), and to_string() parses back to the same spec.
#include <algorithm>
#include <string>

#include "fuzz_common.hpp"
#include "lite/model/input_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    const auto spec = lite::model::parse_input_spec(text);
    fuzz::require(!spec.shape.empty(), "a shape has dimensions");
    for (auto d : spec.shape) fuzz::require(d > 0, "dimensions are positive");
    const auto& dtypes = lite::model::input_dtypes();
    fuzz::require(std::find(dtypes.begin(), dtypes.end(), spec.dtype) != dtypes.end(), "the dtype is known");
    fuzz::require(lite::model::parse_input_spec(lite::model::to_string(spec)) == spec, "to_string round-trips");
  });
  return 0;
}

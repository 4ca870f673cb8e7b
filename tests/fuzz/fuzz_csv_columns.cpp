// Fuzz target: the --csv-columns parser, lite::cache::parse_csv_columns ("time=2,key=5,size=4,delimiter=tab").
// Input: the flag's text. Invariants: a parsed spec names the key column, and every column is 0 (absent) or a
// 1-based column number.
#include <string>

#include "fuzz_common.hpp"
#include "lite/cache/cache_sim.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    const auto c = lite::cache::parse_csv_columns(text);
    fuzz::require(c.key >= 1, "the key column is given");
    fuzz::require(c.time >= 0 && c.size >= 0 && c.cost >= 0, "columns are 0 or 1-based");
    fuzz::require(c.explicit_columns, "a parsed spec is explicit");
  });
  return 0;
}

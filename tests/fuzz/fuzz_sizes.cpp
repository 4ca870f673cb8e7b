// Fuzz target: the cache size parsers, lite::cache::parse_sizes (--sizes) and lite::parse_byte_size.
// Input: byte 0 bit 0 = byte mode (--bytes); the rest is the flag's text.
// Invariants: a parsed size is either a fraction of the working set in (0, 1] or a positive absolute size;
// a parsed byte size fits 64 bits (an overflow is rejected, never wrapped or capped).
#include <cmath>

#include "fuzz_common.hpp"
#include "lite/cache/cache_sim.hpp"
#include "lite/core/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split_flags(data, size);
  const std::string text(in.rest);
  fuzz::expect_clean([&] {
    for (const auto& s : lite::cache::parse_sizes(text, (in.flags & 1) != 0)) {
      if (s.fraction != 0)
        fuzz::require(s.fraction > 0 && s.fraction <= 1 && s.absolute == 0, "a fraction is in (0, 1]");
      else
        fuzz::require(s.absolute > 0, "an absolute size is positive");
    }
  });
  (void)lite::parse_byte_size(text);
  return 0;
}

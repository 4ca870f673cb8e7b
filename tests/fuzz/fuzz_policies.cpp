// Fuzz target: the --policy parser, lite::cache::parse_policies ("lru,s3fifo:small=0.1,ghost=0.9", all, none).
// Input: the flag's text. Invariants: every parsed policy is in the policy table, each parameter is one of the
// policy's, finite and within its documented range (whole where it must be), and a label parses back to the
// same policy.
#include <cmath>
#include <string>

#include "fuzz_common.hpp"
#include "lite/cache/cache_sim.hpp"
#include "lite/cache/policies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    for (const auto& spec : lite::cache::parse_policies(text)) {
      const lite::cache::PolicyEntry& entry = lite::cache::find_policy(spec.name);
      for (const auto& [name, value] : spec.params) {
        const lite::cache::PolicyParam* param = nullptr;
        for (const auto& p : entry.params)
          if (name == p.name) param = &p;
        fuzz::require(param != nullptr, "a parameter belongs to its policy");
        fuzz::require(std::isfinite(value) && value >= param->min_value && value <= param->max_value,
                      "a parameter is finite and within its range");
        fuzz::require(!param->integer || value == std::floor(value), "an integer parameter is whole");
      }
      const auto again = lite::cache::parse_policies(spec.label());
      fuzz::require(again.size() == 1 && again[0].label() == spec.label(), "a label parses back to itself");
    }
  });
  return 0;
}

#pragma once
// Hand-made prefix traces for the prefix-mode tests: "t:in:ids" per request, e.g. "0:8:1,2 5:7:1,3", written as
// Mooncake JSON lines and read by the real reader.
#include <fmt/format.h>

#include <sstream>
#include <string>

#include "lite/cache/prefix/block_trace.hpp"

namespace lite::cache::prefix::testing {

inline BlockTrace mooncake(const std::string& spec, uint32_t block_tokens = 4, bool skip = false) {
  std::string text;
  std::istringstream in(spec);
  std::string item;
  while (in >> item) {
    const auto a = item.find(':'), b = item.find(':', a + 1);
    text += fmt::format("{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": 1, \"hash_ids\": [{}]}}\n",
                        item.substr(0, a), item.substr(a + 1, b - a - 1), item.substr(b + 1));
  }
  BlockTraceOptions o;
  o.block_tokens = block_tokens;
  o.skip_bad_lines = skip;
  TraceFacts facts;
  return parse_block_trace(text, o, facts);
}

}  // namespace lite::cache::prefix::testing

#pragma once
// One line of a prefix trace read without building a JSON tree: a strict scanner for a JSON object that takes the
// fields a request has (whole numbers, lists of whole numbers) and skips any other key's value. It is the reader's
// speed (Mooncake's 3 MB trace in a few ms instead of 0.2 s through a DOM) and its one place for field rules.
// Internal to the prefix mode.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lite::cache::prefix {

// A bad line: the field (or "line") and the problem, for FILE:LINE: field 'F' PROBLEM.
class LineError : public std::runtime_error {
 public:
  LineError(std::string field, const std::string& problem) : std::runtime_error(problem), field(std::move(field)) {}
  std::string field;
};

struct RequestLine {
  std::optional<uint64_t> timestamp, input_length, output_length;
  bool has_hash_ids = false, has_tokens = false;  // tokens: "tokens" or "prompt_token_ids"
  std::vector<uint64_t> hash_ids, tokens;          // a reader scans every line into one RequestLine: their room stays
  const char* tokens_key = "tokens";
};

// Scans `line` (one JSON object) into `out`, cleared first. Whole numbers above a field's bound (kMaxTokens for
// lengths) are refused. Throws LineError.
void scan_request_line(std::string_view line, RequestLine& out);
RequestLine scan_request_line(std::string_view line);

constexpr uint64_t kMaxTokens = uint64_t(1) << 32;  // a prompt longer than 4G tokens is not a prompt

}  // namespace lite::cache::prefix

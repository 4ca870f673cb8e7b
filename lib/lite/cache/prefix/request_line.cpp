// scan_request_line(): a strict JSON object scanner for prefix-trace lines (request_line.hpp). Strict where JSON
// is (quotes, commas, nesting at most 64 deep in skipped values, nothing after the object), permissive of keys it
// does not know.
#include "lite/cache/prefix/request_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace lite::cache::prefix {

namespace {

constexpr int kMaxSkipDepth = 64;

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  void object(RequestLine& out) {
    out.timestamp.reset();
    out.input_length.reset();
    out.output_length.reset();
    out.has_hash_ids = out.has_tokens = false;
    out.tokens_key = "tokens";
    ws();
    expect('{', "line", "is not one JSON object");
    ws();
    if (peek() != '}') {
      for (;;) {
        ws();
        const std::string_view key = string("line");
        ws();
        expect(':', "line", "is not one JSON object");
        ws();
        field(key, out);
        ws();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        break;
      }
    }
    expect('}', "line", "is not one JSON object");
    ws();
    if (i_ != s_.size()) throw LineError("line", "is not one JSON object (text after it)");
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void ws() {
    while (i_ < s_.size() && static_cast<unsigned char>(s_[i_]) <= ' ' &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n'))
      ++i_;
  }
  void expect(char c, const char* field, const char* problem) {
    if (peek() != c) throw LineError(field, problem);
    ++i_;
  }
  // A string's raw text between its quotes (escapes kept as written; keys we read have none).
  std::string_view string(const char* field) {
    expect('"', field, "is not one JSON object");
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (static_cast<unsigned char>(s_[i_]) < 0x20) throw LineError(field, "is not one JSON object");
      i_ += s_[i_] == '\\' ? 2 : 1;
    }
    if (i_ >= s_.size()) throw LineError(field, "is not one JSON object (a string is not closed)");
    return s_.substr(start, i_++ - start);
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  static bool number_char(char c) { return digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; }
  // A JSON number's text (skipped values, and the quote of a bad one).
  std::string_view number_text() {
    const size_t start = i_;
    while (i_ < s_.size() && number_char(s_[i_])) ++i_;
    return s_.substr(start, i_ - start);
  }
  [[noreturn]] void not_whole(const char* field, size_t start) {
    i_ = start;
    std::string_view shown = number_text();
    if (shown.empty()) shown = s_.substr(start, 20);
    shown = shown.substr(0, std::min<size_t>(40, shown.find_first_of(",}]")));
    if (shown.size() > 1 && shown[0] == '-' && shown.find_first_not_of("0123456789", 1) == std::string_view::npos)
      throw LineError(field, fmt::format("{} is negative", shown));
    throw LineError(field, fmt::format("'{}' is not a whole number", shown));
  }
  // The reader's inner loop: eight digits at a time where eight bytes remain (a byte loop at the end of a line),
  // on locals (a member index would be stored back at every digit). 19 digits cannot overflow; a 20th takes
  // whole_checked().
  uint64_t whole(const char* field, uint64_t max) {
    const char* const begin = s_.data();
    const char* const end = begin + s_.size();
    const char* p = begin + i_;
    uint64_t v = 0;
    size_t n = 8;
    for (int chunk = 0; chunk < 2 && n == 8 && end - p >= 8; ++chunk) {
      uint64_t part = 0;
      n = eight_digits(p, part);
      v = v * kPow10[n] + part;
      p += n;
    }
    if (n == 8) {
      const char* const fast_end = begin + std::min(s_.size(), i_ + 19);
      while (p < fast_end && digit(*p)) v = v * 10 + uint64_t(*p++ - '0');
    }
    if (p < end && digit(*p)) return whole_checked(field, max);
    const size_t start = i_;
    i_ = size_t(p - begin);
    if (i_ == start || (i_ - start > 1 && begin[start] == '0') || (p < end && number_char(*p))) not_whole(field, start);
    if (v > max) throw LineError(field, fmt::format("{} is larger than {}", v, max));
    return v;
  }
  static constexpr uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
  // How many of the 8 bytes at p lead with digits, and their value (SWAR: a byte is a digit when its high nibble
  // is 3 before and after adding 6; the digits are then combined pairwise in three multiplies).
  static size_t eight_digits(const char* p, uint64_t& value) {
    uint64_t chunk = 0;
    std::memcpy(&chunk, p, 8);  // little-endian: the first character is the lowest byte
    const uint64_t high = chunk & 0xF0F0F0F0F0F0F0F0ULL;
    const uint64_t carried = (chunk + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL;
    const uint64_t not_digit = (high | carried >> 4) ^ 0x3333333333333333ULL;
    const size_t n = not_digit ? size_t(__builtin_ctzll(not_digit)) / 8 : 8;
    if (n == 0) return value = 0, 0;
    uint64_t t = (chunk - 0x3030303030303030ULL) << (8 * (8 - n));  // the digits, right-aligned in 8 places
    t = t * 10 + (t >> 8);
    value = (((t & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
             (((t >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    return n;
  }
  uint64_t whole_checked(const char* field, uint64_t max) {
    const size_t start = i_;
    uint64_t v = 0;
    for (; i_ < s_.size() && digit(s_[i_]); ++i_) {
      const uint64_t d = uint64_t(s_[i_] - '0');
      if (v > (UINT64_MAX - d) / 10) throw LineError(field, fmt::format("{}... is larger than {}", s_.substr(start, 20), max));
      v = v * 10 + d;
    }
    if (s_[start] == '0' || (i_ < s_.size() && number_char(s_[i_]))) not_whole(field, start);
    if (v > max) throw LineError(field, fmt::format("{} is larger than {}", v, max));
    return v;
  }
  void whole_list(const char* field, uint64_t max, std::vector<uint64_t>& out) {
    if (peek() != '[') throw LineError(field, "is not a list of whole numbers");
    ++i_;
    out.clear();
    ws();
    if (peek() == ']') return void(++i_);
    for (;;) {
      ws();
      out.push_back(whole(field, max));
      ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect(']', field, "is not a list of whole numbers");
      return;
    }
  }
  void skip_value(int depth) {
    if (depth > kMaxSkipDepth) throw LineError("line", "nests deeper than 64");
    const char c = peek();
    if (c == '"') {
      string("line");
    } else if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      ws();
      if (peek() == close) return void(++i_);
      for (;;) {
        ws();
        if (c == '{') {
          string("line");
          ws();
          expect(':', "line", "is not one JSON object");
          ws();
        }
        skip_value(depth + 1);
        ws();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(close, "line", "is not one JSON object");
        return;
      }
    } else if (s_.compare(i_, 4, "true") == 0 || s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else if (s_.compare(i_, 5, "false") == 0) {
      i_ += 5;
    } else if (number_text().empty()) {
      throw LineError("line", "is not one JSON object");
    }
  }
  template <class T>
  void once(std::optional<T>& slot, const char* key, T value) {
    if (slot) throw LineError(key, "appears twice");
    slot = std::move(value);
  }
  void once_list(bool& seen, const char* key, std::vector<uint64_t>& list, uint64_t max) {
    if (seen) throw LineError(key, "appears twice");
    whole_list(key, max, list);
    seen = true;
  }
  void field(std::string_view key, RequestLine& out) {
    if (key == "timestamp") once(out.timestamp, "timestamp", whole("timestamp", uint64_t(INT64_MAX)));
    else if (key == "input_length") once(out.input_length, "input_length", whole("input_length", kMaxTokens));
    else if (key == "output_length") once(out.output_length, "output_length", whole("output_length", kMaxTokens));
    else if (key == "hash_ids") once_list(out.has_hash_ids, "hash_ids", out.hash_ids, UINT64_MAX);
    else if (key == "tokens" || key == "prompt_token_ids") {
      const char* name = key == "tokens" ? "tokens" : "prompt_token_ids";
      if (!out.has_tokens) out.tokens_key = name;
      once_list(out.has_tokens, name, out.tokens, uint64_t(INT64_MAX));
    } else {
      skip_value(1);
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

void scan_request_line(std::string_view line, RequestLine& out) { Scanner(line).object(out); }

RequestLine scan_request_line(std::string_view line) {
  RequestLine out;
  scan_request_line(line, out);
  return out;
}

}  // namespace lite::cache::prefix

#include "lite/core/text.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace lite {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    parts.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool glob_match(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));  // no XML 1.0 document may hold it, escaped or not
    else out += c;
  }
  return out;
}

std::string escape_control(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
  return out;
}

std::string shorten(std::string_view s, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte
    if (chars++ == max_chars) return std::string(s.substr(0, i)) + "...";
  }
  return std::string(s);
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view name, const std::vector<std::string>& known) {
  std::optional<std::string> best;
  size_t best_distance = std::string::npos;
  for (const auto& k : known) {
    size_t d = edit_distance(name, k);
    if (d < best_distance) {
      best_distance = d;
      best = k;
    }
  }
  // A typo changes a few letters; beyond a third of the word it is a different word.
  size_t limit = std::max<size_t>(2, name.size() / 3);
  if (!best || best_distance > limit) return std::nullopt;
  return best;
}

std::string unknown_name_message(std::string_view kind, std::string_view name, const std::vector<std::string>& known) {
  std::string msg = fmt::format("unknown {} '{}'", kind, name);
  msg += "; ";
  if (auto m = closest_match(name, known)) msg += fmt::format("did you mean '{}'? ", *m);
  msg += "known: " + join(known, ", ");
  return msg;
}

size_t decimal_number_length(std::string_view text) {
  auto digits = [&](size_t i) {
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i;
  };
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  const size_t whole_end = digits(i);
  size_t end = whole_end;
  bool any_digit = whole_end > i;
  if (end < text.size() && text[end] == '.') {
    const size_t fraction_end = digits(end + 1);
    any_digit = any_digit || fraction_end > end + 1;
    end = fraction_end;
  }
  if (!any_digit) return 0;
  if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    size_t j = end + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    const size_t exponent_end = digits(j);
    if (exponent_end > j) end = exponent_end;  // "5e" is 5 followed by the unit "e"
  }
  return end;
}

std::optional<double> parse_decimal(std::string_view text) {
  const std::string s = trim(text);
  const size_t n = decimal_number_length(s);
  if (n == 0 || n != s.size()) return std::nullopt;
  const double value = std::strtod(s.c_str(), nullptr);  // decimal by now: strtod reads it exactly as written
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<uint64_t> parse_byte_size(std::string_view text) {
  std::string s = trim(text);
  const size_t n = decimal_number_length(s);
  if (n == 0) return std::nullopt;
  const std::optional<double> parsed = parse_decimal(std::string_view(s).substr(0, n));
  if (!parsed || *parsed < 0) return std::nullopt;
  const double value = *parsed;
  std::string unit = to_lower(trim(std::string_view(s).substr(n)));
  double scale = 1;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") scale = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib") scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib") scale = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib") scale = 1024.0 * 1024 * 1024 * 1024;
  else return std::nullopt;
  const double bytes = std::round(value * scale);
  if (!(bytes < 18446744073709551616.0)) return std::nullopt;  // 2^64: does not fit (never wrapped or capped)
  return static_cast<uint64_t>(bytes);
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{:.0f} B", v);
  return fmt::format("{:.{}f} {}", v, std::fabs(v) < 10 ? 2 : (std::fabs(v) < 100 ? 1 : 0), units[u]);
}

std::string format_ms(double ms) {
  double a = std::fabs(ms);
  if (a >= 100) return fmt::format("{:.1f}", ms);
  if (a >= 10) return fmt::format("{:.2f}", ms);
  if (a >= 1) return fmt::format("{:.3f}", ms);
  return fmt::format("{:.4f}", ms);
}

std::string format_count(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace lite

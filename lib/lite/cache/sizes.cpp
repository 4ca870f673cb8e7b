// --sizes: "auto", or a list of plain numbers (objects, or bytes with --bytes), byte sizes with
// KB/MB/GB or KiB/MiB/GiB (powers of 1024, as libCacheSim reads them), fractions of the working set
// (0.1) or percentages (10%).
#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "lite/cache/cache_sim.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

const std::vector<double>& auto_size_fractions() {
  static const std::vector<double> f = {0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.5, 1.0};
  return f;
}

namespace {

// 2^64 as a double: the first value a uint64_t cannot hold (every double below it converts exactly).
constexpr double kTwoTo64 = 18446744073709551616.0;

[[noreturn]] void throw_overflow(const std::string& t) {
  throw OptionError("sizes", fmt::format("'{}' does not fit in 64 bits (the largest size is 18446744073709551615)", t),
                    "give a smaller size");
}

std::string sizes_fix(bool bytes) {
  return bytes ? "use e.g. 64MiB, 1GB, 1048576, 0.1 (10% of the working set) or 25%"
               : "use e.g. 1000 (objects), 0.1 (10% of the working set) or 25%";
}

[[noreturn]] void throw_not_a_size(const std::string& t, bool bytes, const std::string& why = "is not a size") {
  throw OptionError("sizes", fmt::format("'{}' {}", t, why), sizes_fix(bytes));
}

// "25%": a share of the working set in (0, 100].
SizeSpec parse_percentage(const std::string& t, bool bytes) {
  const std::optional<double> p = parse_decimal(std::string_view(t).substr(0, t.size() - 1));
  if (!p) throw_not_a_size(t, bytes, "is not a size (a percentage is a decimal number and %, e.g. 25%)");
  if (*p <= 0 || *p > 100) throw OptionError("sizes", fmt::format("'{}' must be a percentage in (0, 100]", t), "use e.g. 25%");
  SizeSpec s;
  s.text = t;
  s.fraction = *p / 100.0;
  return s;
}

// A plain number: whole (absolute), a fraction below 1, or "1.0" (the whole working set).
SizeSpec parse_plain(const std::string& t, bool bytes) {
  SizeSpec s;
  s.text = t;
  if (t.find_first_not_of("0123456789") == std::string::npos) {
    // all digits: exact, whatever the magnitude (a double would round 2^64-1 up to 2^64)
    uint64_t whole = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), whole);
    if (ec == std::errc::result_out_of_range) throw_overflow(t);
    if (whole == 0) throw OptionError("sizes", fmt::format("'{}' is not positive", t), "cache sizes must be > 0; " + sizes_fix(bytes));
    s.absolute = whole;
    return s;
  }
  const std::optional<double> v = parse_decimal(t);
  if (!v) {
    if (decimal_number_length(t) == t.size()) throw_overflow(t);  // decimal, but beyond a double (1e999)
    throw_not_a_size(t, bytes);
  }
  if (*v <= 0) throw OptionError("sizes", fmt::format("'{}' is not positive", t), "cache sizes must be > 0; " + sizes_fix(bytes));
  if (*v >= kTwoTo64) throw_overflow(t);
  if (*v < 1) s.fraction = *v;
  else if (*v != std::floor(*v)) throw_not_a_size(t, bytes, "is neither a whole number nor a fraction below 1");
  else if (*v == 1 && t.find('.') != std::string::npos) s.fraction = 1.0;  // "1.0" = the whole working set
  else s.absolute = static_cast<uint64_t>(*v);
  return s;
}

// A number with a byte unit: 64KiB, 1.5GB.
SizeSpec parse_with_unit(const std::string& t, const std::string& unit, bool bytes) {
  const bool byte_unit = parse_byte_size("1 " + unit).has_value();  // the blank keeps "e3" or "5" from being digits
  if (!byte_unit) throw_not_a_size(t, bytes);  // 0x10, 5 5, 10 objects
  const std::optional<double> number = parse_decimal(std::string_view(t).substr(0, t.size() - unit.size()));
  if (number && *number <= 0)
    throw OptionError("sizes", fmt::format("'{}' is not positive", t), "cache sizes must be > 0; " + sizes_fix(bytes));
  if (!bytes)
    throw OptionError("sizes", fmt::format("'{}' has a byte unit but the simulation counts objects", t),
                      "add {bytes}, or give a number of objects");
  const auto b = parse_byte_size(t);
  if (!b) throw_overflow(t);  // the unit is a byte unit: the number is too large
  if (*b == 0) throw OptionError("sizes", fmt::format("'{}' is zero bytes", t), "cache sizes must be > 0; " + sizes_fix(bytes));
  SizeSpec s;
  s.text = t;
  s.absolute = *b;
  return s;
}

}  // namespace

std::vector<SizeSpec> parse_sizes(const std::string& text, bool bytes) {
  std::vector<SizeSpec> out;
  if (to_lower(trim(text)) == "auto") return out;
  for (const std::string& raw : split(text, ',')) {
    std::string t = trim(raw);
    if (t.empty()) continue;
    if (out.size() == kMaxSizes)
      throw OptionError("sizes", fmt::format("more than {} sizes given (each is one simulated cache per policy)", kMaxSizes),
                        fmt::format("give at most {} sizes, or {{mrc}} for the exact LRU curve at every size in one pass",
                                    kMaxSizes));
    if (t.back() == '%') {
      out.push_back(parse_percentage(t, bytes));
      continue;
    }
    const size_t n = decimal_number_length(t);
    if (n == 0) throw_not_a_size(t, bytes);
    const std::string unit = trim(std::string_view(t).substr(n));
    out.push_back(unit.empty() ? parse_plain(t, bytes) : parse_with_unit(t, unit, bytes));
  }
  if (out.empty()) throw OptionError("sizes", "no size given", "use e.g. {sizes} 1000,10000 or {sizes} auto");
  return out;
}

std::string size_label(uint64_t size, bool bytes) { return bytes ? format_bytes(double(size)) : format_count(size); }

}  // namespace lite::cache

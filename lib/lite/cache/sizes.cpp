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
  throw UsageError(fmt::format("{{sizes}}: '{}' does not fit in 64 bits (the largest size is 18446744073709551615); "
                               "give a smaller size",
                               t));
}

}  // namespace

std::vector<SizeSpec> parse_sizes(const std::string& text, bool bytes) {
  std::vector<SizeSpec> out;
  if (to_lower(trim(text)) == "auto") return out;
  for (const std::string& raw : split(text, ',')) {
    std::string t = trim(raw);
    if (t.empty()) continue;
    SizeSpec s;
    s.text = t;
    const std::string fix = bytes ? "use e.g. 64MiB, 1GB, 1048576, 0.1 (10% of the working set) or 25%"
                                  : "use e.g. 1000 (objects), 0.1 (10% of the working set) or 25%";
    if (!t.empty() && t.back() == '%') {
      char* end = nullptr;
      std::string num = trim(t.substr(0, t.size() - 1));
      double p = std::strtod(num.c_str(), &end);
      if (num.empty() || *end != '\0' || !std::isfinite(p))
        throw UsageError(fmt::format("{{sizes}}: '{}' is not a size; {}", t, fix));
      if (p <= 0 || p > 100)
        throw OptionError("sizes", fmt::format("'{}' must be a percentage in (0, 100]", t), "use e.g. 25%");
      s.fraction = p / 100.0;
      out.push_back(s);
      continue;
    }
    // a plain number: whole (absolute) or a fraction below 1
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    std::string unit = trim(std::string_view(end));
    if (end == t.c_str() || !std::isfinite(v))
      throw UsageError(fmt::format("{{sizes}}: '{}' is not a size; {}", t, fix));
    if (v <= 0) throw OptionError("sizes", fmt::format("'{}' is not positive", t), "cache sizes must be > 0; " + fix);
    if (unit.empty()) {
      uint64_t whole = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), whole);
      if (p == t.data() + t.size() && t.find_first_not_of("0123456789") == std::string::npos) {
        // all digits: exact, whatever the magnitude (a double would round 2^64-1 up to 2^64)
        if (ec == std::errc::result_out_of_range) throw_overflow(t);
        s.absolute = whole;
        out.push_back(s);
        continue;
      }
      if (v >= kTwoTo64) throw_overflow(t);
      if (v < 1) {
        s.fraction = v;
      } else if (v != std::floor(v)) {
        throw UsageError(fmt::format("{{sizes}}: '{}' is neither a whole number nor a fraction below 1; {}", t, fix));
      } else if (v == 1 && t.find('.') != std::string::npos) {
        s.fraction = 1.0;  // "1.0" = the whole working set
      } else {
        s.absolute = static_cast<uint64_t>(v);
      }
      out.push_back(s);
      continue;
    }
    if (!bytes)
      throw UsageError(fmt::format("{{sizes}}: '{}' has a byte unit but the simulation counts objects; add {{bytes}}, "
                                   "or give a number of objects",
                                   t));
    auto b = parse_byte_size(t);
    if (!b && parse_byte_size("1" + unit)) throw_overflow(t);  // the unit is fine: the number is too large
    if (!b) throw UsageError(fmt::format("{{sizes}}: '{}' is not a size; {}", t, fix));
    if (*b == 0) throw OptionError("sizes", fmt::format("'{}' is zero bytes", t), "cache sizes must be > 0; " + fix);
    s.absolute = *b;
    out.push_back(s);
  }
  if (out.empty()) throw UsageError("{sizes}: no size given; use e.g. {sizes} 1000,10000 or {sizes} auto");
  return out;
}

std::string size_label(uint64_t size, bool bytes) { return bytes ? format_bytes(double(size)) : format_count(size); }

}  // namespace lite::cache

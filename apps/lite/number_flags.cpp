// Strict decimal spelling for numeric flags (see number_flags.hpp).
#include "number_flags.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <stdexcept>
#include <unordered_set>

#include "lite/core/text.hpp"

namespace lite::cli {
namespace {

enum class NumberText { unsigned_whole, signed_whole, real };

bool all_digits(const std::string& s, size_t from) {
  return s.size() > from && s.find_first_not_of("0123456789", from) == std::string::npos;
}

bool spelled_right(std::string& value, NumberText kind) {
  const std::string lower = to_lower(value);
  switch (kind) {
    case NumberText::unsigned_whole:
    case NumberText::signed_whole: {
      const size_t sign = kind == NumberText::signed_whole && !value.empty() && value[0] == '-' ? 1 : 0;
      if (!all_digits(value, sign)) return false;
      const size_t first = value.find_first_not_of('0', sign);  // "010" -> "10", "-0" -> "-0", "000" -> "0"
      value.erase(sign, (first == std::string::npos ? value.size() - 1 : first) - sign);
      return true;
    }
    case NumberText::real:
      for (const char* word : {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan"})
        if (lower == word) return true;
      return !value.empty() && decimal_number_length(value) == value.size();
  }
  return false;
}

// Whole numbers past 64 bits: CLI11's strtoull saturates or wraps them without an error, so 2^64 given to
// --seed ran with a different seed. Checked on the normalized digits (no leading zeros).
std::string beyond_64_bits(const std::string& value, NumberText kind) {
  if (kind == NumberText::real) return {};
  const bool negative = !value.empty() && value[0] == '-';
  const std::string digits = value.substr(negative ? 1 : 0);
  const std::string largest = kind == NumberText::unsigned_whole ? "18446744073709551615"
                              : negative                         ? "9223372036854775808"
                                                                 : "9223372036854775807";
  if (digits.size() < largest.size() || (digits.size() == largest.size() && digits <= largest)) return {};
  return negative ? "'" + value + "' is out of range (the smallest is -" + largest + ")"
                  : "'" + value + "' is out of range (the largest is " + largest + ")";
}

// The spelling the option's CLI11 type name calls for (INT, UINT, FLOAT; a container's or std::optional's is its
// element's); none for text and switches.
std::optional<NumberText> number_text_of(const CLI::Option& option) {
  if (option.get_type_size() == 0) return std::nullopt;  // a switch
  const std::string type = option.get_type_name().substr(0, option.get_type_name().find(':'));
  if (type == "INT") return NumberText::signed_whole;
  if (type == "UINT") return NumberText::unsigned_whole;
  if (type == "FLOAT") return NumberText::real;
  return std::nullopt;
}

// Options that already have their spelling check (with their own wording of what is accepted).
std::unordered_set<const CLI::Option*>& checked_options() {
  static std::unordered_set<const CLI::Option*> options;
  return options;
}

CLI::Option* add_decimal_check(CLI::Option* option, NumberText kind, const std::string& accepted) {
  CLI::Validator strict(
      [kind, accepted](std::string& value) -> std::string {
        if (spelled_right(value, kind)) return beyond_64_bits(value, kind);
        return "'" + value + "' is not " + accepted;
      },
      "");
  checked_options().insert(option);
  return option->transform(strict);
}

}  // namespace

CLI::Option* decimal_only(CLI::Option* option, const std::string& accepted) {
  const std::optional<NumberText> kind = number_text_of(*option);
  if (!kind) throw std::logic_error("decimal_only: " + option->get_name() + " takes no number");
  return add_decimal_check(option, *kind, accepted);
}

void decimal_numbers_only(CLI::App& command) {
  for (CLI::Option* option : command.get_options()) {
    if (checked_options().count(option)) continue;  // checked with the flag's own words
    const std::optional<NumberText> kind = number_text_of(*option);
    if (kind == NumberText::signed_whole) add_decimal_check(option, *kind, "a decimal whole number");
    if (kind == NumberText::unsigned_whole) add_decimal_check(option, *kind, "a decimal whole number >= 0");
    if (kind == NumberText::real) add_decimal_check(option, *kind, "a decimal number (such as 0.5 or 1e-3)");
  }
}

CLI::Option* not_zero(CLI::Option* option, const std::string& accepted) {
  CLI::Validator nonzero(
      [accepted](std::string& value) -> std::string {
        if (value.find_first_not_of("0") != std::string::npos) return {};
        return "'" + value + "' is not " + accepted;
      },
      "");
  return option->check(nonzero);
}

}  // namespace lite::cli

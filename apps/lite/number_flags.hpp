#pragma once
// Numeric flags take plain decimal text only. CLI11 reads integers with strtoull/strtoll in base 0 and
// doubles with strtold, so without this "0x10" is 16, "010" is 8 (octal), "-1" given to an unsigned flag is
// 2^64-1, and "0x1p-3" is 0.125: junk that would run instead of failing. The value's range is the library's
// (validate() names it by option key); this is only the spelling, and the message quotes what is accepted.
#include <string>

namespace CLI {
class App;
class Option;
}

namespace lite::cli {

enum class NumberText {
  unsigned_whole,  // digits
  signed_whole,    // an optional '-' and digits
  real,            // decimal with an optional fraction and exponent (0.5, 12, 1e-3); inf and nan are left
                   // to the library's finite() check, which says so
};

// Adds the check to `option` (leading zeros are dropped, so CLI11 never reads "010" as octal); a bad value
// fails parsing with "FLAG: 'VALUE' is not ACCEPTED". Returns `option`.
CLI::Option* decimal_only(CLI::Option* option, NumberText kind, const std::string& accepted);

// decimal_only for every numeric option of `command` that has no such check yet, its kind read from CLI11's type
// name (INT, UINT, FLOAT): called once per subcommand after its setup, so a new flag cannot miss it.
void decimal_numbers_only(CLI::App& command);

// For an option whose 0 means "unset" in the options struct (a config file may say so): given as a flag, 0 is a
// mistake, refused with "FLAG: '0' is not ACCEPTED". Returns `option`.
CLI::Option* not_zero(CLI::Option* option, const std::string& accepted);

}  // namespace lite::cli

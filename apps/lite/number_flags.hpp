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

// Adds the check to `option`, its kind read from the option's CLI11 type (INT: an optional '-' and digits;
// UINT: digits; FLOAT: decimal with an optional fraction and exponent, such as 0.5, 12 or 1e-3, with inf and nan
// left to the library's finite() check, which says so; a container's or std::optional's type is its element's).
// Leading zeros are dropped, so CLI11 never reads "010" as octal; a bad value fails parsing with
// "FLAG: 'VALUE' is not ACCEPTED", ACCEPTED being the flag's own words for what it takes ("a whole number of keys
// from 1 to ..."): the flag chooses the words, never the rule. std::logic_error for an option that takes no number.
// Returns `option`.
CLI::Option* decimal_only(CLI::Option* option, const std::string& accepted);

// The same rule for every numeric option of `command` that has no such check yet, in the rule's own words ("a decimal
// whole number >= 0"): called once per subcommand after its setup, so a new flag cannot miss it.
void decimal_numbers_only(CLI::App& command);

// For an option whose 0 means "unset" in the options struct (a config file may say so): given as a flag, 0 is a
// mistake, refused with "FLAG: '0' is not ACCEPTED". Returns `option`.
CLI::Option* not_zero(CLI::Option* option, const std::string& accepted);

}  // namespace lite::cli

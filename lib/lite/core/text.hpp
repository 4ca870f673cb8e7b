#pragma once
// Small text helpers shared by every subcommand: "did you mean", byte sizes, number formatting.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lite {

std::vector<std::string> split(std::string_view s, char sep);
std::string trim(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string to_lower(std::string_view s);
// Shell-style glob (*, ?, [...]) over a name, e.g. a layer "features.*", "*classifier.4".
bool glob_match(const std::string& pattern, const std::string& name);

// Number of code points in a UTF-8 string (the width a terminal gives it, for the text we print).
size_t display_width(std::string_view s);

// `s` with control characters written as escapes: a newline as \n, a tab as \t, a carriage return as \r, any
// other byte below 0x20 and DEL as \xHH. What the CLI does to every error line, so a value quoted into a
// message (a flag value with a newline in it) cannot cut the line or move the terminal's cursor.
std::string escape_control(std::string_view s);

// `s` as XML character data or an attribute value: & < > " written as entities (the SVG plots' labels).
std::string xml_escape(std::string_view s);

// The first `max_chars` code points of `s`, with "..." after them when `s` is longer: how an error line quotes a
// value that may be huge (a key or token of an untrusted file). Not escaped here: the CLI escapes the whole line.
std::string shorten(std::string_view s, size_t max_chars = 40);

// Levenshtein distance, used for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);
// The known name closest to `name`, if it is close enough to be a likely typo.
std::optional<std::string> closest_match(std::string_view name, const std::vector<std::string>& known);
// "unknown KIND 'NAME'; did you mean 'X'? known: a, b, c"
std::string unknown_name_message(std::string_view kind, std::string_view name, const std::vector<std::string>& known);

// The length of the plain decimal number at the start of `text`: [+-]digits[.digits][(e|E)[+-]digits] or
// [+-].digits[...]; 0 when `text` does not start with one. strtod and CLI11 also read hex ("0x10", "0x1p4"),
// "inf", "nan" and (for integers) "010" as octal 8: lite's numbers are decimal only.
size_t decimal_number_length(std::string_view text);
// `text` (blanks around it allowed) as a plain decimal number (decimal_number_length); nullopt when it is
// anything else or not finite as a double.
std::optional<double> parse_decimal(std::string_view text);

// Parses "4096", "64KB", "1.5 GiB", "512MiB" into bytes. KB/MB/GB and KiB/MiB/GiB are all powers of
// 1024 (as libCacheSim reads them). The number is decimal (decimal_number_length). Returns nullopt if the text
// is not a size or does not fit 64 bits.
std::optional<uint64_t> parse_byte_size(std::string_view text);

// 1536 -> "1.5 KiB"
std::string format_bytes(double bytes);
// Milliseconds with 3 significant decimals that stay readable from microseconds to seconds.
std::string format_ms(double ms);
// 1234567 -> "1,234,567"
std::string format_count(uint64_t n);

}  // namespace lite

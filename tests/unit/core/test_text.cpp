#include <doctest/doctest.h>

#include "lite/core/text.hpp"

using namespace lite;

TEST_CASE("byte sizes use powers of 1024 for KB and KiB alike") {
  CHECK(parse_byte_size("4096") == 4096u);
  CHECK(parse_byte_size("64KB") == 65536u);
  CHECK(parse_byte_size("64KiB") == 65536u);
  CHECK(parse_byte_size("1.5 GiB") == 1610612736u);
  CHECK(parse_byte_size("2mb") == 2097152u);
  CHECK_FALSE(parse_byte_size("twelve").has_value());
  CHECK_FALSE(parse_byte_size("12 parsecs").has_value());
  CHECK_FALSE(parse_byte_size("-3").has_value());
  CHECK_FALSE(parse_byte_size("").has_value());
}

TEST_CASE("did you mean") {
  std::vector<std::string> known = {"lru", "fifo", "s3fifo", "sieve"};
  CHECK(closest_match("s3fif", known) == std::optional<std::string>("s3fifo"));
  CHECK(closest_match("LRU", known) == std::optional<std::string>("lru"));
  CHECK_FALSE(closest_match("belady-with-prefetch", known).has_value());
  auto msg = unknown_name_message("policy", "siev", known);
  CHECK(msg == "unknown policy 'siev'; did you mean 'sieve'? known: lru, fifo, s3fifo, sieve");
}

TEST_CASE("formatting") {
  CHECK(format_count(1234567) == "1,234,567");
  CHECK(format_count(12) == "12");
  CHECK(format_bytes(1536) == "1.50 KiB");
  CHECK(format_bytes(100) == "100 B");
  CHECK(split("a,b,,c", ',') == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(trim("  x y \n") == "x y");
  CHECK(display_width("µs") == 2);
}

TEST_CASE("escape_control writes control characters as escapes and keeps UTF-8") {
  CHECK(escape_control("a\nb") == "a\\nb");
  CHECK(escape_control("tab\there\r") == "tab\\there\\r");
  CHECK(escape_control(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(escape_control("\x1b[31m") == "\\x1b[31m");
  CHECK(escape_control("\x7f") == "\\x7f");
  CHECK(escape_control("µs 'ok'") == "µs 'ok'");
}

TEST_CASE("shorten keeps the first code points of a long value and marks the cut") {
  CHECK(shorten("short") == "short");
  CHECK(shorten(std::string(40, 'a')) == std::string(40, 'a'));
  CHECK(shorten(std::string(41, 'a')) == std::string(40, 'a') + "...");
  CHECK(shorten("µµµµ", 2) == "µµ...");  // never cuts inside a UTF-8 sequence
  CHECK(shorten("", 0) == "");
}

TEST_CASE("numbers are decimal only: no hex, no inf or nan, a unit may follow") {
  CHECK(decimal_number_length("12") == 2);
  CHECK(decimal_number_length("-1.5e-3x") == 7);
  CHECK(decimal_number_length(".5") == 2);
  CHECK(decimal_number_length("5.") == 2);
  CHECK(decimal_number_length("5e") == 1);  // "e" is then a unit, not an exponent
  CHECK(decimal_number_length("64KiB") == 2);
  CHECK(decimal_number_length("0x10") == 1);
  for (const char* junk : {"", ".", "-", "+.", "e5", "inf", "nan", "x1"}) {
    CAPTURE(junk);
    CHECK(decimal_number_length(junk) == 0);
  }
  CHECK(parse_decimal(" 0.25 ") == 0.25);
  CHECK(parse_decimal("1e3") == 1000.0);
  for (const char* junk : {"0x10", "0x1p-3", "inf", "-inf", "nan", "1e999", "1.5.2", "5 5", "1,5", ""}) {
    CAPTURE(junk);
    CHECK_FALSE(parse_decimal(junk).has_value());
  }
  CHECK_FALSE(parse_byte_size("0x10MB").has_value());
  CHECK_FALSE(parse_byte_size("infGB").has_value());
  CHECK(parse_byte_size("1e3KB") == 1024000u);
}

TEST_CASE("glob_match: shell-style patterns over layer names") {
  CHECK(glob_match("features.?", "features.4"));
  CHECK_FALSE(glob_match("features.?", "features.10"));
  CHECK(glob_match("*classifier.4", "model.classifier.4"));
  CHECK(glob_match("layer[12].*", "layer2.0.conv1"));
  CHECK_FALSE(glob_match("layer[12].*", "layer3.0.conv1"));
}

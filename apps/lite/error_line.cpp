#include "error_line.hpp"

#include <cstdio>

#include "flag_wording.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cli {

namespace {
bool print_errors = true;
}  // namespace

std::string error_line(const std::string& where, const std::string& label, const std::string& text) {
  return where + ": " + label + ": " + escape_control(trim(text));
}

void print_error_line(const std::string& where, const std::string& label, const std::string& text) {
  if (!print_errors) return;
  std::fprintf(stderr, "%s\n", error_line(where, label, text).c_str());
}

void print_interrupted_line(const std::string& where, const std::string& outcome) {
  if (!print_errors) return;
  std::fprintf(stderr, "\n%s: interrupted; %s\n", where.c_str(), escape_control(outcome).c_str());
}

void print_option_warnings(const std::string& where) {
  for (const std::string& text : take_option_warnings()) print_error_line(where, "warning", word_options(text));
}

void set_error_printing(bool on) { print_errors = on; }

bool error_printing() { return print_errors; }

}  // namespace lite::cli

#include "lite/core/error.hpp"

namespace lite {

std::string describe_problem(const std::string& file, const std::string& problem, const std::string& fix) {
  std::string message = file.empty() ? problem : file + ": " + problem;
  if (!fix.empty()) message += "; " + fix;
  return message;
}

int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
    case ErrorKind::bad_input: return exit_bad_input;
    case ErrorKind::interrupted: return exit_interrupted;
    case ErrorKind::internal: return exit_internal;
    case ErrorKind::run_failed: return exit_check_failed;
  }
  return exit_internal;
}

std::string first_line(const std::string& message) {
  size_t start = message.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return {};
  size_t end = message.find_first_of("\r\n", start);
  std::string line = message.substr(start, end == std::string::npos ? std::string::npos : end - start);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

}  // namespace lite

#include "lite/model/torch_errors.hpp"

#include <c10/util/Exception.h>

#include <sstream>

#include "lite/core/error.hpp"

namespace lite::model {

namespace {

// libtorch's terse reasons that name no input, with what they mean for the data lite fed.
std::string explained(std::string reason) {
  static const std::pair<const char*, const char*> kMeanings[] = {
      {"index out of range in self", " (an id in the input is outside the table the model looks it up in, such as an "
                                     "embedding's vocabulary)"},
  };
  for (const auto& [terse, meaning] : kMeanings)
    if (reason == terse) return reason + meaning;
  return reason;
}

std::string reason_of(const std::exception& e) {
  std::string text;
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e))
    text = c10_error->what_without_backtrace();
  else
    text = e.what();
  if (text.find("Traceback of TorchScript") == std::string::npos) return first_line(text);
  // The interpreter appends the Python-style exception line last: "RuntimeError: <reason>".
  std::istringstream lines(text);
  std::string line, reason;
  while (std::getline(lines, line)) {
    auto colon = line.find("Error: ");
    if (colon != std::string::npos && line.find_first_of(" \t") > colon) reason = line.substr(colon + 7);
  }
  return reason.empty() ? first_line(text) : first_line(reason);
}

}  // namespace

std::string torch_error_reason(const std::exception& e) { return explained(reason_of(e)); }

}  // namespace lite::model

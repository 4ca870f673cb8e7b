#include "command_line.hpp"

namespace lite::cli {

namespace {
std::string g_command_line;

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@%") ==
                          std::string::npos)
    return arg;
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

void remember_command_line(int argc, char** argv) {
  g_command_line.clear();
  for (int i = 0; i < argc; ++i) g_command_line += (i ? " " : "") + shell_quote(i == 0 ? "lite" : argv[i]);
}

const std::string& command_line() { return g_command_line; }

RunContext run_context() { return RunContext{g_command_line}; }

}  // namespace lite::cli

#pragma once
// A flag renamed in this release keeps its old spelling for one more: the old flag sets the new one's field, is
// hidden from --help, and warns when used (lite/core/options.hpp's warn_option; the CLI prints the warning once,
// before the run). The options' JSON keys follow the same rule through OptionReader::renamed.
#include <CLI/CLI.hpp>
#include <string>

#include "flag_wording.hpp"
#include "lite/core/options.hpp"

namespace lite::cli {

template <class T>
void add_renamed_flag(CLI::App& app, const std::string& old_flag, const std::string& key, T& field) {
  note_renamed_flag(key, old_flag);
  app.add_option(old_flag, field)->group("")->each([old_flag, key](const std::string&) {
    warn_option(old_flag + " is renamed {" + key + "}; the old name works until the next release");
  });
}

}  // namespace lite::cli

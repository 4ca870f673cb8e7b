#pragma once
// The library names options by key ("calib_method"); the CLI words them as flags. The default is "--" + the key
// with '_' -> '-' ("--calib-method"); a subcommand names the exceptions when it binds them (name_flag("models",
// "MODEL"), name_flag("timing.warmup", "--warmup")). A key path with '.' or '[' and no flag of its own (a recipe's
// "steps[2].quantize.mode") is printed as it is.
#include <string>
#include <vector>

namespace lite::cli {

void name_flag(const std::string& key, const std::string& flag);
std::string flag_for_key(const std::string& key);
// An old spelling of `key`'s flag, kept for one release (renamed_flags.hpp): it counts as the flag when the command
// line is merged over a --config file.
void note_renamed_flag(const std::string& key, const std::string& old_flag);
const std::vector<std::string>& renamed_flags(const std::string& key);
// Text from the library (table descriptions for --help, report cells) with its {key} references worded as flags.
std::string word_options(const std::string& text);

}  // namespace lite::cli

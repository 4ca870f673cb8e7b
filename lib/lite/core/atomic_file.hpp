#pragma once
// Outputs are written to a temporary file beside the destination, flushed, then renamed over it, so a
// crash or Ctrl-C never leaves a half-written artifact and never touches the input.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace lite {

// The output rule: `output` (the value of option `key`) may not be, or link to,
// any of `inputs`, may not be a directory, and its folder must exist. Throws OptionError(key, "OUTPUT: problem",
// fix), which the CLI prints with the flag's name.
void check_output(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs,
                  const std::string& key);

// Calls write(temp_path), fsyncs the temporary file and renames it to `output`. On any exception the
// temporary file is removed and the exception propagates; `output` is then untouched.
void write_atomically(const std::filesystem::path& output,
                      const std::function<void(const std::filesystem::path& temp_path)>& write);

// Convenience for text and small binary outputs.
void write_file_atomically(const std::filesystem::path& output, const std::string& contents);

// "model.pt" + "int8" -> "model.int8.pt"
std::filesystem::path derive_output_path(const std::filesystem::path& input, const std::string& tag);

}  // namespace lite

#pragma once
// The one rule for the files a command touches. Every path it reads (model, data, labels, config, recipe,
// trace, checkpoints) and every path it will write (artifact, sidecars, reports, plots, work files) is
// collected before any work and checked at once:
//   - no output is an input: compared by identity (device + inode, after resolving links) and, for files not
//     there yet, by their resolved name;
//   - no two outputs share a path (the second would replace the first);
//   - an output that exists is a regular file: the atomic write renames its temporary file over the target,
//     which would replace a device or FIFO (as root, `--plot /dev/null` would destroy /dev/null);
//   - an output is not a folder and its folder exists.
// Errors are OptionErrors under the output's key naming the other role ("{calib}"), so the CLI words both as
// flags and a recipe as key paths. Torch-free.
#include <filesystem>
#include <string>
#include <vector>

namespace lite {

class FileRoles {
 public:
  // `role` names the file in messages beside its path: an option reference ("{eval}"), words ("the recipe"),
  // or "" for the path alone. Empty paths and "-" (standard input) are skipped.
  FileRoles& reads(const std::string& role, const std::filesystem::path& path);
  // `key` is the option key errors are reported under; `role` defaults to "{key}".
  FileRoles& writes(const std::string& key, const std::filesystem::path& path, const std::string& role = {});

  // Throws OptionError on the first violation (see above).
  void check() const;

 private:
  struct Entry {
    std::string key, role;
    std::filesystem::path path;
  };
  std::vector<Entry> inputs_, outputs_;
};

// Whether two paths name one file: the same device and inode when both exist, else the same resolved name.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// Throws InputError(path, "is not a regular file ...") when `path` exists and is a device, FIFO or socket.
// write_atomically calls it as the last defence; FileRoles::check reports the same earlier under the option.
void refuse_special_output(const std::filesystem::path& path);

}  // namespace lite

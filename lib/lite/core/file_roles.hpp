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
// An output folder (a results folder, created if missing) has rules of its own:
//   - it is not an input, nor lies under one (an input is a file, so the folder could never be made there);
//   - it is not another output's path, nor lies under an output file (one would replace the other);
//   - what exists of it is a folder: the path itself if there, else its nearest existing ancestor, writable.
// Errors are OptionErrors under the output's key naming the other role ("{calib}"), so the CLI words both as
// flags and a recipe as key paths. Torch-free.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lite {

class FileRoles {
 public:
  // `role` names the file in messages beside its path: an option reference ("{eval}"), words ("the recipe"),
  // or "" for the path alone. Empty paths and "-" (standard input) are skipped.
  FileRoles& reads(const std::string& role, const std::filesystem::path& path);
  // An optional input: read as above when given, nothing when unset.
  FileRoles& reads_optional(const std::string& role, const std::optional<std::filesystem::path>& path) {
    return path ? reads(role, *path) : *this;
  }
  // `key` is the option key errors are reported under; `role` defaults to "{key}".
  FileRoles& writes(const std::string& key, const std::filesystem::path& path, const std::string& role = {});
  // An output folder (see above); `key` and `role` as for writes().
  FileRoles& writes_folder(const std::string& key, const std::filesystem::path& path, const std::string& role = {});

  // Throws OptionError on the first violation (see above).
  void check() const;

 private:
  struct Entry {
    std::string key, role;
    std::filesystem::path path;
    bool folder = false;
  };
  void check_folder(const Entry& out, size_t index) const;
  std::vector<Entry> inputs_, outputs_;
};

// Whether two paths name one file: the same device and inode when both exist, else the same resolved name.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);
// Whether `path` lies strictly under `ancestor`, by resolved names (links and '..' followed where they exist).
bool lies_under(const std::filesystem::path& path, const std::filesystem::path& ancestor);

// Throws InputError(path, "is not a regular file ...") when `path` exists and is a device, FIFO or socket.
// write_atomically calls it as the last defence; FileRoles::check reports the same earlier under the option.
void refuse_special_output(const std::filesystem::path& path);

// Throws InputError(path, "is a character device, not a trace file ...") when `path` exists and is a device or a
// socket: for inputs read as a stream (a FIFO is fine), checked before any work even where they are read late.
void refuse_device_input(const std::filesystem::path& path, const std::string& what, const std::string& fix);

// "a character device", "a block device", "a FIFO" or "a socket" for a stat() mode (st_mode) of that kind; ""
// for a regular file, a folder or anything else. Every "not a regular file" message names the kind with it.
std::string special_file_kind(unsigned int st_mode);

}  // namespace lite

#include "lite/core/file_roles.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lite/core/error.hpp"
#include "lite/core/options.hpp"

namespace fs = std::filesystem;

namespace lite {

namespace {

bool skipped(const fs::path& path) { return path.empty() || path == "-"; }

// special_file_kind of an existing path; "" when it does not exist.
std::string special_kind(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return special_file_kind(st.st_mode);
}

// The CLI escapes control characters of the whole error line once; escaping here too would print "\\n".
std::string quoted(const fs::path& path) { return path.string(); }

template <class Entry>
std::string describe(const Entry& e) {
  return e.role.empty() ? quoted(e.path) : e.role + " (" + quoted(e.path) + ")";
}

void check_output_place(const std::string& key, const fs::path& path) {
  const std::string where = quoted(path) + ": ";
  if (path.empty()) throw OptionError(key, "empty output path", "give a file name");
  const std::string kind = special_kind(path);
  if (!kind.empty())
    throw OptionError(key, where + "exists and is " + kind + ", not a regular file (lite replaces the file it writes)",
                      "give the path of a regular file");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw OptionError(key, where + "is a directory", "give a file name");
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::is_directory(parent, ec))
    throw OptionError(key, where + "its folder does not exist",
                      "create " + quoted(parent) + " first, or choose another path");
  if (::access(parent.c_str(), W_OK) != 0)  // a read-only file system refuses root too (EROFS)
    throw OptionError(key, where + "its folder " + quoted(parent) + " is not writable: " + std::strerror(errno),
                      "choose a path in a writable folder");
}

// An output folder's own place: a folder if it exists, else under a writable folder (it is created later).
void check_folder_place(const std::string& key, const fs::path& path) {
  const std::string where = quoted(path) + ": ";
  if (path.empty()) throw OptionError(key, "empty folder path", "give a folder path");
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_directory(status))
    throw OptionError(key, where + "is a file, not a folder", "give a folder (created if missing)");
  fs::path existing = fs::absolute(path, ec);
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.root_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec))
    throw OptionError(key, where + quoted(existing) + " is not a folder", "give a folder path (created if missing)");
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    throw OptionError(key, where + quoted(existing) + " is not writable", "give a folder you can write to");
}

}  // namespace

namespace {
// Absolute, links and '..' resolved where the path exists, without a trailing separator.
fs::path resolved(const fs::path& path, std::error_code& ec) {
  fs::path r = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (!r.has_filename() && r.has_relative_path()) r = r.parent_path();
  return r;
}
}  // namespace

bool lies_under(const fs::path& path, const fs::path& ancestor) {
  std::error_code ep, ea;
  const fs::path p = resolved(path, ep), a = resolved(ancestor, ea);
  if (ep || ea) return false;
  auto pi = p.begin();
  for (auto ai = a.begin(); ai != a.end(); ++ai, ++pi)
    if (pi == p.end() || *pi != *ai) return false;
  return pi != p.end();
}

bool same_file(const fs::path& a, const fs::path& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(a, ea), cb = fs::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

void refuse_special_output(const fs::path& path) {
  const std::string kind = special_kind(path);
  if (!kind.empty())
    throw InputError(quoted(path), "exists and is " + kind + ", not a regular file (lite replaces the file it writes)",
                     "give the path of a regular file");
}

FileRoles& FileRoles::reads(const std::string& role, const fs::path& path) {
  if (!skipped(path)) inputs_.push_back({{}, role, path});
  return *this;
}

FileRoles& FileRoles::writes(const std::string& key, const fs::path& path, const std::string& role) {
  outputs_.push_back({key, role.empty() ? "{" + key + "}" : role, path, false});
  return *this;
}

FileRoles& FileRoles::writes_folder(const std::string& key, const fs::path& path, const std::string& role) {
  outputs_.push_back({key, role.empty() ? "{" + key + "}" : role, path, true});
  return *this;
}

// The collisions come before the folder's own place: a folder over an input file would otherwise be reported
// as "a file", without saying which.
void FileRoles::check_folder(const Entry& out, size_t index) const {
  const std::string where = quoted(out.path) + ": ";
  for (const Entry& in : inputs_) {
    if (same_file(out.path, in.path))
      throw OptionError(out.key, where + "is the input " + describe(in) + ", not a folder to write to",
                        "choose a different folder (lite never overwrites its inputs)");
    if (lies_under(out.path, in.path))
      throw OptionError(out.key, where + "lies under the input " + describe(in) + ", a file, not a folder",
                        "choose a folder outside the inputs");
  }
  for (size_t j = 0; j < outputs_.size(); ++j) {
    if (j == index) continue;
    const Entry& other = outputs_[j];
    if (same_file(out.path, other.path))
      throw OptionError(out.key, where + "is also the path of the output " + describe(other) + "; one would replace the other",
                        "give each output its own path");
    if (!other.folder && lies_under(out.path, other.path))
      throw OptionError(out.key, where + "lies under the output file " + describe(other) + "; one would replace the other",
                        "give the folder a path outside the other outputs");
  }
  check_folder_place(out.key, out.path);
}

void FileRoles::check() const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const Entry& out = outputs_[i];
    if (out.folder) {
      check_folder(out, i);
      continue;
    }
    check_output_place(out.key, out.path);
    const std::string where = quoted(out.path) + ": ";
    for (const Entry& in : inputs_)
      if (same_file(out.path, in.path))
        throw OptionError(out.key, where + "would overwrite the input " + describe(in),
                          "choose a different path (lite never overwrites its inputs)");
    for (size_t j = 0; j < i; ++j)
      if (same_file(out.path, outputs_[j].path))
        throw OptionError(out.key, where + "is also the path of the output " + describe(outputs_[j]) + "; one would replace the other",
                          "give each output its own path");
  }
}

void refuse_device_input(const fs::path& path, const std::string& what, const std::string& fix) {
  const std::string kind = special_kind(path);
  if (!kind.empty() && kind != "a FIFO") throw InputError(path.string(), "is " + kind + ", not " + what, fix);
}

std::string special_file_kind(unsigned int st_mode) {
  if (S_ISCHR(st_mode)) return "a character device";
  if (S_ISBLK(st_mode)) return "a block device";
  if (S_ISFIFO(st_mode)) return "a FIFO";
  if (S_ISSOCK(st_mode)) return "a socket";
  return {};
}

}  // namespace lite

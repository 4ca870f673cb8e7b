// Opening data files: the one place lite turns a data path into bytes (dataset.cpp's whole-file reader, the
// chunked reader's header and labels), so the checks every data file needs are made once.
//
// A data path must name a regular file: a device (/dev/zero, /dev/urandom) never ends and a FIFO or socket
// blocks or streams without end, so "read the whole file" would grow until the process is killed. It is
// checked by stat (following links) before the file is opened; a regular file's size is then what it holds,
// and the read allocates exactly that.
#include "lite/model/data_file.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "lite/core/error.hpp"
#include "lite/core/file_roles.hpp"

namespace fs = std::filesystem;

namespace lite::model {

void require_regular_file(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw InputError(path.string(), "no such file", "check the path");
    throw InputError(path.string(), std::string("cannot open file for reading (") + std::strerror(errno) + ")",
                     "check the path and its permissions");
  }
  if (S_ISDIR(st.st_mode)) throw InputError(path.string(), "is a directory", "pass a data file");
  if (!S_ISREG(st.st_mode))
    throw InputError(path.string(), "is not a regular file (" + special_file_kind(st.st_mode) + ")", "give a data file");
}

std::vector<char> read_data_file(const fs::path& path) {
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (!in || ec) throw InputError(path.string(), "cannot open file for reading", "check the path and its permissions");
  std::vector<char> bytes(size_t(size), '\0');
  in.read(bytes.data(), std::streamsize(size));
  if (uint64_t(in.gcount()) != size)
    throw InputError(path.string(), "ended early (changed while being read)", "check the file");
  return bytes;
}

std::vector<char> read_tensor_file_maybe_gzip(const fs::path& path, TensorFormat format, uint64_t max_inflated_bytes) {
  std::vector<char> bytes = read_data_file(path);
  if (bytes.size() < 2 || uint8_t(bytes[0]) != 0x1f || uint8_t(bytes[1]) != 0x8b) return bytes;
  return inflate_tensor_file(std::string_view(bytes.data(), bytes.size()), format, max_inflated_bytes, path.string());
}

namespace {

bool write_fully(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= size_t(w);
  }
  return true;
}

}  // namespace

bool is_gzip_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {0, 0};
  in.read(magic, 2);
  return in.gcount() == 2 && uint8_t(magic[0]) == 0x1f && uint8_t(magic[1]) == 0x8b;
}

InflatedCopy::InflatedCopy(const fs::path& gz, TensorFormat format) {
  const std::vector<char> bytes = read_data_file(gz);
  const std::string_view compressed(bytes.data(), bytes.size());
  const uint64_t declared = declared_tensor_bytes(compressed, format, gz.string());
  std::error_code ec;
  const fs::path folder = fs::temp_directory_path(ec);
  struct statvfs fsinfo {};
  const std::string fix = "set TMPDIR to a folder with room, or pass the file decompressed (gunzip)";
  if (ec || ::statvfs(folder.c_str(), &fsinfo) != 0)
    throw InputError(gz.string(), "no temporary folder to inflate it into for streaming", fix);
  const uint64_t room = uint64_t(fsinfo.f_bavail) * fsinfo.f_frsize;
  if (declared > room)
    throw InputError(gz.string(), fmt::format("inflates to {:.1f} MB, more than the {:.1f} MB free in {} to stream it from",
                                              double(declared) / 1e6, double(room) / 1e6, folder.string()),
                     fix);
  std::string name = gz.filename().string();
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0) name.resize(name.size() - 3);
  std::string templ = (folder / ("lite-inflated-XXXXXX-" + name)).string();
  const int fd = ::mkstemps(templ.data(), int(name.size() + 1));
  if (fd < 0) throw InputError(gz.string(), std::string("cannot create a temporary file (") + std::strerror(errno) + ")", fix);
  path_ = templ;
  guard_ = std::make_unique<TemporaryFileGuard>(path_);
  try {
    inflate_tensor_file_to(compressed, format, room,
                           [&](const char* data, size_t n) {
                             if (!write_fully(fd, data, n))
                               throw InputError(gz.string(), std::string("cannot write its inflated copy to ") + path_.string() +
                                                                 " (" + std::strerror(errno) + ")",
                                                fix);
                           },
                           gz.string());
  } catch (...) {
    ::close(fd);
    ::unlink(path_.c_str());
    throw;
  }
  ::close(fd);
}

InflatedCopy::~InflatedCopy() { ::unlink(path_.c_str()); }

uint64_t default_data_memory_budget() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024 / 2;
  return uint64_t(2) << 30;
}

}  // namespace lite::model

// Byte sources for plain bytes: a file or stdin (a file descriptor, read straight into the caller's buffer),
// and bytes already in memory (tests, fuzz targets). open_source() puts a zstd source around either when the
// first four bytes are zstd's magic number, so every reader sees decompressed bytes and never knows. A file
// source can hand every raw byte it reads to a CopyBytes callback: the engine spools a stream (stdin, a FIFO)
// in the same pass that first reads it, so the text checks and the line bound stop /dev/zero before the spool
// grows (engine.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"
#include "lite/core/file_roles.hpp"

namespace lite::cache::detail {

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

uint64_t file_size_or_zero(const std::string& path) {
  if (path == "-") return 0;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<uint64_t>(st.st_size);
}

bool is_stream(const std::string& path) {
  if (path == "-") return true;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

bool has_zstd_magic(std::string_view head) {
  return head.size() >= 4 && static_cast<unsigned char>(head[0]) == 0x28 &&
         static_cast<unsigned char>(head[1]) == 0xB5 && static_cast<unsigned char>(head[2]) == 0x2F &&
         static_cast<unsigned char>(head[3]) == 0xFD;
}

namespace {

class FdSource final : public ByteSource {
 public:
  FdSource(int fd, bool own, std::string name, CopyBytes copy)
      : fd_(fd), own_(own), name_(std::move(name)), copy_(std::move(copy)) {}
  ~FdSource() override {
    if (own_) ::close(fd_);
  }
  size_t read(char* dst, size_t n) override {
    size_t done = 0;
    if (pos_ < peek_.size()) {
      done = std::min(n, peek_.size() - pos_);
      std::memcpy(dst, peek_.data() + pos_, done);
      pos_ += done;
      if (done == n) return done;
    }
    while (true) {
      ssize_t r = ::read(fd_, dst + done, n - done);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw InputError(name_, std::string("read failed: ") + std::strerror(errno), "check the file and its disk");
      consumed_ += static_cast<uint64_t>(r);
      if (copy_ && r > 0) copy_(dst + done, static_cast<size_t>(r));
      return done + static_cast<size_t>(r);
    }
  }
  uint64_t consumed() const override { return consumed_; }
  // Reads the first bytes so the caller can look at them; they are returned again by read().
  const std::string& peek(size_t n) {
    while (peek_.size() < n) {
      char tmp[64];
      ssize_t r = ::read(fd_, tmp, std::min(sizeof(tmp), n - peek_.size()));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw InputError(name_, std::string("read failed: ") + std::strerror(errno), "check the file and its disk");
      if (r == 0) break;
      consumed_ += static_cast<uint64_t>(r);
      if (copy_) copy_(tmp, static_cast<size_t>(r));
      peek_.append(tmp, static_cast<size_t>(r));
    }
    return peek_;
  }

 private:
  int fd_;
  bool own_;
  std::string name_;
  CopyBytes copy_;
  std::string peek_;
  size_t pos_ = 0;
  uint64_t consumed_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  size_t read(char* dst, size_t n) override {
    const size_t take = std::min(n, bytes_.size() - pos_);
    if (take) std::memcpy(dst, bytes_.data() + pos_, take);  // an empty view may have a null data()
    pos_ += take;
    return take;
  }
  uint64_t consumed() const override { return pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> open_source(const std::string& path, const std::string& display, CopyBytes copy) {
  const std::string name = display.empty() ? display_name(path) : display;
  int fd = 0;
  bool own = false;
  if (path != "-") {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw InputError(name, std::string("cannot open the trace: ") + std::strerror(errno), "check the path");
    if (S_ISDIR(st.st_mode)) throw InputError(name, "is a directory, not a trace file", "pass a trace file");
    // A device never ends (/dev/urandom, /dev/zero) or is not a trace at all: refuse it before reading.
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
      throw InputError(name, "is " + special_file_kind(st.st_mode) + ", not a trace file (a trace is a regular file, a FIFO or stdin)",
                       "pass a trace file, or '-' to read stdin");
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(name, std::string("cannot open the trace: ") + std::strerror(errno), "check the path and its permissions");
    own = true;
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  }
  auto fd_source = std::make_unique<FdSource>(fd, own, name, std::move(copy));
  if (has_zstd_magic(fd_source->peek(4))) return make_zstd_source(std::move(fd_source), name);
  return fd_source;
}

std::unique_ptr<ByteSource> open_memory_source(std::string_view bytes, const std::string& name) {
  auto source = std::make_unique<MemorySource>(bytes);
  if (has_zstd_magic(bytes)) return make_zstd_source(std::move(source), name);
  return source;
}

}  // namespace lite::cache::detail

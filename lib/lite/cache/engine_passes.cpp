// The passes simulate() may need before the main one, and the temporary files they write.
//
//   [spool] (in engine.cpp) a stream read more than once is copied to an unlinked TempFile by the scan's
//           own reads (open_source's CopyBytes), so nothing is read before the format checks
//   [scan]  one pass for the working set (sizes given as fractions, auto sizes), for Belady's key file
//           when the format lacks next accesses, or for fixed-size SHARDS (the N smallest key hashes
//           give the sampling rate)
//   [next]  Belady only: the key file is read backwards in 64K-request blocks to compute each
//           request's next-access index into a second temporary file (memory: one map entry per
//           object; disk: 16 bytes per request; nothing per request stays in memory)
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <queue>

#include "lite/cache/engine_internal.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

namespace lite::cache::detail {

// ---- temporary files ----------------------------------------------------------------------------

TempFile::TempFile(const std::string& dir_option, const char* tag) {
  std::string dir = dir_option;
  if (dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir = t && *t ? t : "/tmp";
  }
  std::string pattern = dir + "/lite-cache-sim-" + tag + "-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0)
    throw InputError(dir, std::string("cannot create a temporary file: ") + std::strerror(errno),
                     "set TMPDIR to a writable folder with free space");
  ::unlink(name.data());  // gone when closed, also after a crash
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
}

void TempFile::write_at(const void* data, size_t n, uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      throw InputError("temporary file", std::string("write failed: ") + std::strerror(errno),
                       "free disk space or set TMPDIR to another folder");
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  size_ = std::max(size_, offset);
}

size_t TempFile::read_at(void* data, size_t n, uint64_t offset) const {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, static_cast<char*>(data) + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw InputError("temporary file", std::string("read failed: ") + std::strerror(errno),
                                "check the disk of {temp_dir}");
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

void NextStream::fill(int64_t* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    if (pos_ == len_) {
      size_t bytes = file_.read_at(buf_.data(), buf_.size() * 8, offset_);
      offset_ += bytes;
      len_ = bytes / 8;
      pos_ = 0;
      if (len_ == 0) throw InternalError("next-access file shorter than the trace");
    }
    size_t k = std::min(n - done, len_ - pos_);
    std::memcpy(out + done, buf_.data() + pos_, k * 8);
    pos_ += k;
    done += k;
  }
}

// ---- [scan] -------------------------------------------------------------------------------------

namespace {
struct KeyNode {
  uint64_t key = 0;
};
struct LastNode {
  uint64_t key = 0;
  int64_t last = 0;
};

// Keeps the n+1 smallest hashes seen: the largest of them is the fixed-size SHARDS threshold.
class SmallestHashes {
 public:
  explicit SmallestHashes(uint64_t n) : n_(n) {}
  void offer(uint64_t h) {
    if (heap_.size() <= n_) heap_.push(h);
    else if (h < heap_.top()) {
      heap_.pop();
      heap_.push(h);
    }
  }
  uint64_t threshold() const { return heap_.size() > n_ ? heap_.top() : UINT64_MAX; }

 private:
  uint64_t n_;
  std::priority_queue<uint64_t> heap_;
};
}  // namespace

ScanResult scan_trace(TraceReader& reader, const ScanRequest& request, uint64_t source_size, Progress& progress) {
  ScanResult scan;
  ProgressPhase phase(progress, "scanning trace", source_size);
  ObjectTable<KeyNode> seen(1 << 16);
  SmallestHashes smallest(request.sample_objects);
  if (request.write_keys) scan.keys = std::make_unique<TempFile>(request.temp_dir, "keys");
  Batch b;
  b.reserve(kBatch);
  uint64_t last_bytes = 0;
  while (true) {
    b.n = 0;
    if (!reader.fill(b)) break;
    for (size_t i = 0; i < b.n; ++i) b.hash[i] = hash_key(b.key[i]);
    for (size_t i = 0; i < b.n; ++i) {
      const uint64_t k = b.key[i];
      const uint64_t h = b.hash[i];
      if (i + 8 < b.n) seen.prefetch(b.hash[i + 8]);
      if (seen.find(k, h) == kNil) {
        seen.insert(k, h);
        scan.wss += b.size[i];
        if (request.sample_objects) smallest.offer(h);
      }
      scan.max_size = std::max<uint64_t>(scan.max_size, b.size[i]);
    }
    if (scan.keys) scan.keys->append(b.key.data(), b.n * 8);
    scan.n_req += b.n;
    phase.advance(reader.bytes_consumed() - last_bytes);
    last_bytes = reader.bytes_consumed();
    throw_if_interrupted();
  }
  scan.n_obj = seen.size();
  if (request.sample_objects) scan.fixed_threshold = smallest.threshold();
  return scan;
}

// ---- [next] -------------------------------------------------------------------------------------

std::unique_ptr<TempFile> compute_next_access(const ScanResult& scan, const std::string& temp_dir, Progress& progress) {
  ProgressPhase phase(progress, "computing next accesses (Belady)", scan.n_req);
  auto next_file = std::make_unique<TempFile>(temp_dir, "next");
  ObjectTable<LastNode> last(static_cast<size_t>(std::min<uint64_t>(scan.n_obj, uint64_t(1) << 26)) + 16);
  const uint64_t block = std::min<uint64_t>(uint64_t(1) << 16, scan.n_req);  // Ctrl-C is polled per block
  RawArray<uint64_t> keys;
  RawArray<int64_t> next;
  keys.resize(block);
  next.resize(block);
  for (uint64_t hi = scan.n_req; hi > 0;) {
    const uint64_t lo = hi > block ? hi - block : 0;
    const size_t n = static_cast<size_t>(hi - lo);
    if (scan.keys->read_at(keys.data(), n * 8, lo * 8) != n * 8) throw InternalError("short read of the key file");
    for (size_t j = n; j-- > 0;) {
      const uint64_t k = keys[j];
      const uint64_t h = hash_key(k);
      uint32_t node = last.find(k, h);
      if (node == kNil) {
        next[j] = kNoNextAccess;
        node = last.insert(k, h);
      } else {
        next[j] = last[node].last;
      }
      last[node].last = static_cast<int64_t>(lo + j + 1);  // 1-based, like oracleGeneral
    }
    next_file->write_at(next.data(), n * 8, lo * 8);
    phase.advance(n);
    hi = lo;
    throw_if_interrupted();
  }
  return next_file;
}

}  // namespace lite::cache::detail

// Reads a zip archive's central directory.
//
// Algorithm: find the End Of Central Directory record (signature PK\5\6, searched backwards over the last
// 64 KiB + 22 bytes; its zip64 form when the 32-bit fields are saturated), read the directory it points at
// (capped at 64 MiB, ~500k entries), and walk its entries (PK\1\2): method, compressed and uncompressed sizes,
// name, and the zip64 extra field (id 1) whose 64-bit values replace the 32-bit fields that hold 0xFFFFFFFF,
// in order. An entry that runs past the directory ends the walk.
#include "lite/model/zip_directory.hpp"

#include <cstring>
#include <fstream>
#include <functional>
#include <optional>

#include "lite/core/error.hpp"

namespace lite::model {

namespace {

constexpr uint64_t kMaxDirectoryBytes = uint64_t(64) << 20;

using ReadArchiveAt = std::function<std::string(uint64_t offset, uint64_t length)>;

// The directory's bytes, found from the end record; nullopt when the archive has no readable end record.
std::optional<std::string> directory_bytes(const ReadArchiveAt& read_at, uint64_t archive_bytes) {
  const uint64_t tail_start = archive_bytes > kEndRecordSearchBytes ? archive_bytes - kEndRecordSearchBytes : 0;
  const std::string tail = read_at(tail_start, archive_bytes - tail_start);
  if (const size_t i = find_end_record(tail); i != std::string_view::npos) {
    uint64_t size = read_little_endian(tail, i + 12, 4), offset = read_little_endian(tail, i + 16, 4);
    if ((offset == 0xFFFFFFFF || size == 0xFFFFFFFF) && i >= 20 && std::memcmp(tail.data() + i - 20, "PK\x06\x07", 4) == 0) {
      const std::string record = read_at(read_little_endian(tail, i - 20 + 8, 8), 56);
      if (record.size() < 56 || std::memcmp(record.data(), "PK\x06\x06", 4) != 0) return std::nullopt;
      size = read_little_endian(record, 40, 8), offset = read_little_endian(record, 48, 8);
    }
    if (offset > archive_bytes || size > archive_bytes - offset || size > kMaxDirectoryBytes) return std::nullopt;
    return read_at(offset, size);
  }
  return std::nullopt;
}

std::vector<ZipDirectoryEntry> parse_directory(std::string_view s) {
  std::vector<ZipDirectoryEntry> entries;
  for (size_t at = 0; at + 46 <= s.size() && std::memcmp(s.data() + at, "PK\x01\x02", 4) == 0;) {
    ZipDirectoryEntry e;
    e.method = read_little_endian(s, at + 10, 2);
    e.packed = read_little_endian(s, at + 20, 4);
    e.size = read_little_endian(s, at + 24, 4);
    const size_t name_len = read_little_endian(s, at + 28, 2), extra_len = read_little_endian(s, at + 30, 2), comment_len = read_little_endian(s, at + 32, 2);
    if (at + 46 + name_len + extra_len > s.size()) break;
    e.name = std::string(s.substr(at + 46, name_len));
    for (size_t x = at + 46 + name_len, end = x + extra_len; x + 4 <= end;) {
      const uint64_t id = read_little_endian(s, x, 2), len = read_little_endian(s, x + 2, 2);
      if (len > end - x - 4) break;
      size_t v = x + 4;
      if (id == 1) {
        if (e.size == 0xFFFFFFFF && v + 8 <= x + 4 + len) e.size = read_little_endian(s, v, 8), v += 8;
        if (e.packed == 0xFFFFFFFF && v + 8 <= x + 4 + len) e.packed = read_little_endian(s, v, 8);
      }
      x += 4 + len;
    }
    entries.push_back(std::move(e));
    at += 46 + name_len + extra_len + comment_len;
  }
  return entries;
}

}  // namespace

size_t find_end_record(std::string_view tail) {
  for (size_t i = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; i-- > 0;)
    if (std::memcmp(tail.data() + i, "PK\x05\x06", 4) == 0) return i;
  return std::string_view::npos;
}

std::vector<ZipDirectoryEntry> zip_directory(const std::string& archive_path) {
  std::ifstream in(archive_path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const uint64_t archive_bytes = uint64_t(in.tellg());
  const ReadArchiveAt read_at = [&in](uint64_t offset, uint64_t length) {
    std::string bytes(size_t(length), '\0');
    in.clear();
    in.seekg(std::streamoff(offset));
    in.read(bytes.data(), std::streamsize(length));
    bytes.resize(size_t(in.gcount()));
    return bytes;
  };
  const auto directory = directory_bytes(read_at, archive_bytes);
  return directory ? parse_directory(*directory) : std::vector<ZipDirectoryEntry>{};
}

std::vector<ZipDirectoryEntry> zip_directory_in_memory(std::string_view archive) {
  const ReadArchiveAt read_at = [archive](uint64_t offset, uint64_t length) {
    return offset >= archive.size() ? std::string() : std::string(archive.substr(size_t(offset), size_t(length)));
  };
  const auto directory = directory_bytes(read_at, archive.size());
  return directory ? parse_directory(*directory) : std::vector<ZipDirectoryEntry>{};
}

void check_declared_size(const ZipDirectoryEntry& e, uint64_t archive_bytes, const std::string& file,
                         const std::string& fix) {
  if (e.packed > archive_bytes)
    throw InputError(file, "member " + e.name + " claims " + std::to_string(e.packed) + " bytes in an archive of " +
                               std::to_string(archive_bytes) + " (a damaged archive)",
                     fix);
  if (e.method == 0 && e.size != e.packed)
    throw InputError(file, "member " + e.name + " is stored uncompressed but its directory says " + std::to_string(e.size) +
                               " bytes for its " + std::to_string(e.packed) + " (a damaged archive)",
                     fix);
  if (e.method == 8 && (e.size > e.packed * kMaxDeflateRatio + 1024 || e.size > 0xFFFFFFFFu || e.packed > 0xFFFFFFFFu))
    throw InputError(file, "member " + e.name + " claims " + std::to_string(e.size) + " bytes uncompressed from " +
                               std::to_string(e.packed) + " (more than deflate's " + std::to_string(kMaxDeflateRatio) +
                               ":1 allows, or over 4 GiB)",
                     fix);
}

void check_declared_sizes(const std::vector<ZipDirectoryEntry>& entries, uint64_t archive_bytes,
                          const std::string& file, const std::string& fix) {
  for (const auto& e : entries) check_declared_size(e, archive_bytes, file, fix);
}

uint64_t read_little_endian(std::string_view s, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(uint8_t(s[at + i])) << (8 * i);
  return v;
}

}  // namespace lite::model

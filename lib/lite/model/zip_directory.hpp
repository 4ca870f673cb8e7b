#pragma once
// A zip archive's central directory (names, compression methods, declared sizes), read without reading the
// members, and the rule that a declared size must be backed by the bytes the archive really holds. libtorch's
// reader (miniz underneath) allocates each record at the size the directory declares before it reads a byte:
// every archive lite hands to libtorch (models, torch.save data, checkpoints) is checked here first.
// Torch-free; see zip_directory.cpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lite::model {

// Deflate's largest expansion (zlib's technical note: 1032:1): a member claiming more uncompressed bytes per
// compressed byte is refused before it is inflated.
constexpr uint64_t kMaxDeflateRatio = 1032;

// The `n`-byte little-endian number at `at` in `s` (zip's byte order); the caller checks the bounds.
uint64_t read_little_endian(std::string_view s, size_t at, size_t n);

// A zip archive ends with an End Of Central Directory record (signature PK\5\6, 22 bytes and a comment of at most
// 64 KiB): the last this many bytes hold it.
constexpr uint64_t kEndRecordSearchBytes = 65536 + 22;

// Where the end record starts in `tail` (the archive's last kEndRecordSearchBytes, or all of a shorter one),
// searched backwards from the last position a whole record fits; npos when there is none (a file cut short by an
// interrupted copy has none).
size_t find_end_record(std::string_view tail);

struct ZipDirectoryEntry {
  std::string name;
  uint64_t method = 0;  // 0 stored, 8 deflate
  uint64_t packed = 0;  // bytes in the archive
  uint64_t size = 0;    // declared uncompressed bytes
};

// The directory of the archive file at `archive_path` (its tail and the directory, zip64 included), or of an
// archive held in memory. Empty when there is no readable directory (the reader then reports the damage).
std::vector<ZipDirectoryEntry> zip_directory(const std::string& archive_path);
std::vector<ZipDirectoryEntry> zip_directory_in_memory(std::string_view archive);

// Throws InputError naming `file` unless the directory's word on a member's size is one its data can back: a
// stored member is as long as its data, a deflated one inflates to at most kMaxDeflateRatio times its
// compressed bytes (plus a little, for tiny members) and under 4 GiB (zlib counts in 32 bits), and no member
// is packed into more bytes than the archive has. `fix` ends the error line.
void check_declared_size(const ZipDirectoryEntry& entry, uint64_t archive_bytes, const std::string& file,
                         const std::string& fix);
void check_declared_sizes(const std::vector<ZipDirectoryEntry>& entries, uint64_t archive_bytes,
                          const std::string& file, const std::string& fix);

}  // namespace lite::model

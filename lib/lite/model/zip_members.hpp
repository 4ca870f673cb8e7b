#pragma once
// The members of a zip archive, read whole into memory: for NumPy's .npz files (np.savez, stored, and
// np.savez_compressed, deflated). Torch-free; see zip_members.cpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lite::model {

// Deflate's largest expansion (zlib's technical note: 1032:1): a member claiming more uncompressed bytes per
// compressed byte is refused before it is inflated.
constexpr uint64_t kMaxDeflateRatio = 1032;

struct ZipMember {
  std::string name;
  std::string bytes;  // uncompressed
};

// Throws InputError naming `file` for a damaged archive, an encrypted member, a compression other than
// stored/deflate, a member whose declared size its data cannot back (beyond its stored bytes, beyond
// kMaxDeflateRatio:1, over 4 GiB), and a member that inflates to another size than declared.
std::vector<ZipMember> read_zip_members(std::string_view archive, const std::string& file);

// The declared uncompressed size of every member whose name ends with `suffix`, read from the central directory
// alone (the file's tail and the directory, zip64 included), for archives too large to read whole: a model's
// extra/lite.json is checked before libtorch inflates it. Empty when the directory cannot be read (libtorch then
// reports the damage itself).
std::vector<std::pair<std::string, uint64_t>> declared_member_sizes(const std::string& archive_path,
                                                                   std::string_view suffix);

}  // namespace lite::model

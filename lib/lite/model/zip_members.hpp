#pragma once
// The members of a zip archive, read whole into memory: for NumPy's .npz files (np.savez, stored, and
// np.savez_compressed, deflated). Torch-free; see zip_members.cpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lite/model/zip_directory.hpp"

namespace lite::model {

struct ZipMember {
  std::string name;
  std::string bytes;  // uncompressed
};

// Throws InputError naming `file` for a damaged archive, an encrypted member, a compression other than
// stored/deflate, a member whose declared size its data cannot back (beyond its stored bytes, beyond
// kMaxDeflateRatio:1, over 4 GiB), and a member that inflates to another size than declared.
std::vector<ZipMember> read_zip_members(std::string_view archive, const std::string& file);

}  // namespace lite::model

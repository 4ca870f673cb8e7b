#pragma once
// The members of a zip archive, read whole into memory: for NumPy's .npz files (np.savez, stored, and
// np.savez_compressed, deflated). Torch-free; see zip_members.cpp.
#include <string>
#include <vector>

namespace lite::model {

struct ZipMember {
  std::string name;
  std::string bytes;  // uncompressed
};

// Throws InputError naming `file` for a damaged archive, an encrypted member or a compression other than
// stored/deflate.
std::vector<ZipMember> read_zip_members(const std::string& archive, const std::string& file);

}  // namespace lite::model

#pragma once
// The members of a zip archive, read whole into memory: for NumPy's .npz files (np.savez, stored, and
// np.savez_compressed, deflated). Torch-free; see zip_members.cpp.
#include <cstdint>
#include <functional>
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
//
// `check`, when given, sees each member before it is inflated whole: its name, its first bytes (at most
// kMemberHeadBytes, inflated) and the size the directory declares. A reader that knows the member's format refuses
// there what its own header contradicts (an .npy whose shape needs more bytes than declared), before paying for it.
constexpr uint64_t kMemberHeadBytes = 65536 + 16;  // the longest .npy header (v2/v3: 4-byte length) and its preamble
using MemberCheck = std::function<void(const std::string& name, std::string_view head, uint64_t declared_size)>;
std::vector<ZipMember> read_zip_members(std::string_view archive, const std::string& file,
                                        const MemberCheck& check = {});

}  // namespace lite::model

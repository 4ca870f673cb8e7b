// Fuzz target: the zip member reader (lib/lite/model/zip_members.cpp, torch-free, compiled in with zlib) that
// opens .npz files. Input: the archive's bytes.
// Invariants: the reader rejects input only with InputError; it never allocates more than the archive can
// inflate to (deflate expands at most ~1032:1, so a member's output is bounded by its compressed bytes; the
// fuzzer's -rss_limit_mb catches a size field trusted blindly, and since the output grows only with what
// really inflates, a declared size the data does not back costs nothing), and every member it returns has a
// name within the archive. The directory reader (zip_directory.cpp, what models and torch.save files are checked
// with before libtorch allocates their records) runs on the same bytes: a member that passes its size check is
// packed into no more bytes than the archive has.
#include <string>

#include "fuzz_common.hpp"
#include "lite/model/zip_members.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    const auto members = lite::model::read_zip_members(bytes, "fuzz.npz");
    for (const auto& m : members) {
      fuzz::require(m.name.size() <= bytes.size(), "a member's name lies in the archive");
      fuzz::require(m.bytes.size() <= uint64_t(bytes.size()) * lite::model::kMaxDeflateRatio + 1024,
                    "a member inflates at most 1032:1");
    }
  });
  fuzz::expect_clean([&] {
    const auto entries = lite::model::zip_directory_in_memory(bytes);
    lite::model::check_declared_sizes(entries, bytes.size(), "fuzz.pt", "re-save it");
    for (const auto& e : entries) fuzz::require(e.packed <= bytes.size(), "a checked member fits in the archive");
  });
  return 0;
}

// Fuzz target: the zip member reader (lib/lite/model/zip_members.cpp, torch-free, compiled in with zlib) that
// opens .npz files. Input: the archive's bytes.
// Invariants: the reader rejects input only with InputError; it never allocates more than the archive can
// inflate to (deflate expands at most ~1032:1, so a member's output is bounded by its compressed bytes; the
// fuzzer's -rss_limit_mb catches a size field trusted blindly, and since the output grows only with what
// really inflates, a declared size the data does not back costs nothing), and every member it returns has a
// name within the archive.
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
  return 0;
}

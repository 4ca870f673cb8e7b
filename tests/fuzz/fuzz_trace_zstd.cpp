// Fuzz target: zstd framing (the streaming decompressor every trace reader can sit on), read from memory.
// Input: the compressed bytes (the zstd magic number is prepended when missing, so every input reaches the
// decoder). The decompressed output is drained in reads of varying sizes and capped at 16 MiB, so a
// decompression bomb costs the fuzzer time, not memory. Invariant: a read never returns more than asked.
#include <vector>

#include "fuzz_common.hpp"
#include "lite/cache/trace_internal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lite::cache::detail;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (!has_zstd_magic(bytes)) bytes.insert(0, "\x28\xB5\x2F\xFD", 4);
  fuzz::expect_clean([&] {
    auto source = open_memory_source(bytes, "fuzz.zst");
    std::vector<char> out(1 << 16);
    size_t total = 0, want = 1;
    while (total < (size_t(16) << 20)) {
      const size_t got = source->read(out.data(), want);
      fuzz::require(got <= want, "a read returns at most what was asked");
      if (got == 0) break;
      total += got;
      want = want * 3 % out.size() + 1;
    }
  });
  return 0;
}

// Fuzz target: the torch.save pickle rewriter (lib/lite/model/pickle_compat.cpp, torch-free, compiled in), which
// scans a hostile pickle stream's opcodes before libtorch's unpickler sees it. Input: the pickle bytes (data.pkl
// of a torch.save archive).
// Invariants: the rewriter rejects input only with InputError (nesting past kMaxPickleNesting, a length past the
// stream's end, a memo index that skips slots, a truncated opcode, a malformed stack); when it stops at an opcode
// it does not model, it returns the input unchanged with nothing rewritten; when it reads the whole stream, its
// output is a fixed point (rewriting it again reads the whole stream without an error, rewrites nothing and
// changes nothing), i.e. it holds none of the forms libtorch lacks.
#include <string>

#include "fuzz_common.hpp"
#include "lite/model/pickle_compat.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    const auto first = lite::model::rewrite_for_torch_unpickler(bytes, "fuzz.pt");
    if (!first.stopped_at.empty()) {
      fuzz::require(first.bytes == bytes && first.rewritten == 0, "a stream the scan stops in is left unchanged");
      return;
    }
    try {
      const auto second = lite::model::rewrite_for_torch_unpickler(first.bytes, "fuzz.pt");
      fuzz::require(second.stopped_at.empty(), "the rewritten stream scans to the end");
      fuzz::require(second.rewritten == 0 && second.bytes == first.bytes, "the rewritten stream is a fixed point");
    } catch (const lite::InputError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      fuzz::require(false, "a rewritten stream is accepted again");
    }
  });
  return 0;
}

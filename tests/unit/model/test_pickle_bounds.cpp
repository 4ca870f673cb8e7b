// The pickle scan's guards (lib/lite/model/pickle_compat.cpp, torch-free): streams that would crash libtorch's
// unpickler (deep nesting) or make it allocate what they do not hold (lengths, memo indices) are refused with
// an InputError naming the file, before libtorch sees them; the forms Python writes still pass and rewrite.
#include <doctest/doctest.h>

#include <string>

#include "lite/core/error.hpp"
#include "lite/model/pickle_compat.hpp"

namespace {

using lite::model::kMaxPickleNesting;
using lite::model::rewrite_for_torch_unpickler;

std::string bytes(const char* s, size_t n) { return std::string(s, n); }

std::string refusal(const std::string& pickle) {
  try {
    rewrite_for_torch_unpickler(pickle, "bad.pt");
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string le32(uint32_t v) { return bytes(reinterpret_cast<const char*>(&v), 4); }

// x = (); for _ in range(levels): x = (x,)  as pickle.dumps(x, protocol=2) writes it: each tuple memoized.
std::string nested_tuples(size_t levels) {
  std::string s = bytes("\x80\x02)", 3);
  for (size_t i = 0; i < levels; ++i) s += "\x85r" + le32(uint32_t(i));
  return s + ".";
}

}  // namespace

TEST_CASE("nesting up to the limit passes, one level more is refused with the file, the depth and the limit") {
  CHECK(rewrite_for_torch_unpickler(nested_tuples(kMaxPickleNesting - 1), "ok.pt").stopped_at.empty());
  const std::string deep = refusal(nested_tuples(kMaxPickleNesting));
  CHECK(has(deep, "bad.pt: "));
  CHECK(has(deep, "nests containers 1001 levels deep (at byte "));
  CHECK(has(deep, "over lite's limit of 1000"));
  // The crash case of issue 22: 200k nested tuples (libtorch's stack overflowed freeing them).
  CHECK(has(refusal(nested_tuples(200000)), "1001 levels deep"));
  // Lists nested by APPEND, and MARKs left open, count the same.
  std::string lists = bytes("\x80\x02", 2);
  for (size_t i = 0; i < 2000; ++i) lists += "]";
  for (size_t i = 0; i < 1999; ++i) lists += "a";
  CHECK(has(refusal(lists + "."), "levels deep"));
  CHECK(has(refusal(bytes("\x80\x02", 2) + std::string(1001, '(')), "opens 1001 MARKs at once"));
}

TEST_CASE("a chain grown by filling lists already held elsewhere is still bounded") {
  // root = [] ; tail = root ; repeat: new = [] ; tail.append(new) ; tail = new  (tail fetched back from the memo
  // after it went into its parent: its holders' depth is not tracked, so the growth counts globally).
  auto chain = [](size_t links) {
    std::string s = bytes("\x80\x02]r", 4) + le32(0);
    for (uint32_t i = 1; i <= links; ++i) s += "j" + le32(i - 1) + "]r" + le32(i) + "a0";
    return s + ".";
  };
  CHECK(rewrite_for_torch_unpickler(chain(500), "ok.pt").rewritten == 500);
  CHECK(has(refusal(chain(1500)), "levels deep"));
}

TEST_CASE("a length beyond the stream's end is refused before anything is allocated") {
  const std::string pad(90, 'a');
  struct Case {
    const char* name;
    std::string pickle;
  };
  const Case cases[] = {
      {"BINUNICODE", bytes("\x80\x02X", 3) + le32(0xFFFFFFFFu) + pad + "."},
      {"BINBYTES", bytes("\x80\x02" "B", 3) + le32(0xFFFFFFFFu) + pad + "."},
      {"BINSTRING", bytes("\x80\x02T", 3) + le32(0x7FFFFFFFu) + pad + "."},
      {"LONG4", bytes("\x80\x02\x8b", 3) + le32(0x10000000u) + pad + "."},
      {"BINUNICODE8", bytes("\x80\x04\x8d", 3) + le32(0) + le32(1) + pad + "."},
      {"BINBYTES8", bytes("\x80\x04\x8e", 3) + le32(0xFFFFFFFFu) + le32(0xFFFFFFFFu) + pad + "."},
      {"BYTEARRAY8", bytes("\x80\x05\x96", 3) + le32(0) + le32(0x80000000u) + pad + "."},
      {"SHORT_BINUNICODE", bytes("\x80\x04\x8c\xff" "abc", 7)},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::string why = refusal(c.pickle);
    CHECK(has(why, std::string(c.name) + " at byte 2 claims "));
    CHECK(has(why, "remain in the pickle stream"));
  }
  CHECK(has(refusal(bytes("\x80\x02X", 3) + le32(4) + "abcd."), "(accepted)"));
}

TEST_CASE("memo indices that skip slots, truncated opcodes and malformed stacks are refused") {
  // libtorch would grow its memo table to 2^32 slots (64 GiB) for this 9-byte stream.
  CHECK(has(refusal(bytes("\x80\x02]r", 4) + le32(0xFFFFFFFFu) + "."), "memo index 4294967295 at byte 3 skips past"));
  CHECK(has(refusal(bytes("\x80\x02]q\x05.", 6)), "memo index 5"));
  CHECK(has(refusal(bytes("\x80\x02J\x01", 4)), "ends inside BININT at byte 2"));
  CHECK(has(refusal(bytes("\x80\x02\x85.", 4)), "TUPLE1 at byte 2 on a short stack"));
  CHECK(has(refusal(bytes("\x80\x02]e.", 5)), "APPENDS at byte 3 has no MARK"));
  CHECK(has(refusal(bytes("\x80\x02(K\x01" "e.", 7)), "APPENDS at byte 5 has no container"));
  CHECK(has(refusal(bytes("\x80\x02(K\x01" "a.", 7)), "APPEND at byte 5 has no container"));
  CHECK(has(refusal(bytes("\x80\x02}(K\x01s.", 8)), "SETITEM at byte 6 across a MARK"));
}

TEST_CASE("the forms Python writes still rewrite as before") {
  // pickle.dumps({'x': 1}, protocol=2): SETITEM -> MARK ... SETITEMS
  auto dict = rewrite_for_torch_unpickler(bytes("\x80\x02}q\x00X\x01\x00\x00\x00xq\x01K\x01s.", 17), "f.pt");
  CHECK(dict.rewritten == 1);
  CHECK(dict.bytes == bytes("\x80\x02}q\x00(X\x01\x00\x00\x00xq\x01K\x01u.", 18));
  // pickle.dumps({'x': 1}, protocol=4): FRAME dropped, MEMOIZE -> LONG_BINPUT, SHORT_BINUNICODE -> BINUNICODE
  const char p4[] = "\x80\x04\x95\n\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01x\x94K\x01s.";
  auto four = rewrite_for_torch_unpickler(bytes(p4, sizeof(p4) - 1), "f.pt");
  CHECK(four.stopped_at.empty());
  const char p2[] = "\x80\x02}r\x00\x00\x00\x00(X\x01\x00\x00\x00xr\x01\x00\x00\x00K\x01u.";
  CHECK(four.bytes == bytes(p2, sizeof(p2) - 1));
  // An opcode the scan does not model still leaves the stream to libtorch, unchanged.
  const std::string odd = bytes("\x80\x02}q\x00\xffK\x01s.", 10);
  auto unchanged = rewrite_for_torch_unpickler(odd, "f.pt");
  CHECK(unchanged.bytes == odd);
  CHECK(unchanged.stopped_at == "opcode 0xff");
}
